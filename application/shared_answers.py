"""A result store whose runs share their model answers: the rounds of a sequential check ask nothing twice.

A stored answer is keyed by the model's identity and the request's full text
(``recorded_ports.request_key``), so an answer one run stored is the answer any
run of the same model would get for the same request (greedy, or the same
sampling seed). ``SharedAnswers`` lets a run read every run's stored answers of
the model stages (log-likelihoods, pseudo-log-likelihoods, generations) as if
they were its own: round k's run asks the model only for the items round k-1's
sample did not hold, and a killed round continues where any round stopped.
Everything else (item records, plans, summaries, leases) stays per run.
"""

from __future__ import annotations

from typing import Any, Mapping

from culturebias.domain.runs import RunLease, RunManifest, StageProgress
from culturebias.ports.results import ResultStore

SHARED_STAGES = ("loglikelihood", "pseudo_loglikelihood", "generation")


class SharedAnswers:
    """``ResultStore`` over ``store``; the model stages of a run read every run's answers (its own win)."""

    def __init__(self, store: ResultStore):
        self.store = store

    def create_run(self, manifest: RunManifest) -> None:
        self.store.create_run(manifest)

    def get_run(self, run_id: str) -> RunManifest | None:
        return self.store.get_run(run_id)

    def find_runs(self, benchmark: str | None = None) -> list[RunManifest]:
        return self.store.find_runs(benchmark)

    def load_results(self, run_id: str, stage: str) -> dict[str, dict[str, Any]]:  # Any: JSON payloads
        own = self.store.load_results(run_id, stage)
        if stage not in SHARED_STAGES:
            return own
        merged: dict[str, dict[str, Any]] = {}  # Any: JSON payloads
        for other in self.store.find_runs():
            if other.run_id != run_id:
                merged.update(self.store.load_results(other.run_id, stage))
        merged.update(own)
        return merged

    def save_results(
        self, run_id: str, stage: str, results: Mapping[str, Mapping[str, Any]], progress: StageProgress | None = None  # Any: JSON payloads
    ) -> None:
        self.store.save_results(run_id, stage, results, progress=progress)

    def finish_run(self, run_id: str, summary: Mapping[str, Any]) -> None:  # Any: summary.json
        self.store.finish_run(run_id, summary)

    def mark_failed(self, run_id: str, reason: str) -> None:
        self.store.mark_failed(run_id, reason)

    def mark_interrupted(self, run_id: str, reason: str) -> None:
        self.store.mark_interrupted(run_id, reason)

    def mark_running(self, run_id: str) -> None:
        self.store.mark_running(run_id)

    def load_summary(self, run_id: str) -> dict[str, Any] | None:  # Any: summary.json
        return self.store.load_summary(run_id)

    def acquire_lease(self, run_id: str, lease: RunLease, stale_before: str, replacing: str | None = None) -> RunLease | None:
        return self.store.acquire_lease(run_id, lease, stale_before, replacing)

    def renew_lease(self, run_id: str, token: str, heartbeat_at: str) -> bool:
        return self.store.renew_lease(run_id, token, heartbeat_at)

    def release_lease(self, run_id: str, token: str) -> None:
        self.store.release_lease(run_id, token)

    def close(self) -> None:
        self.store.close()
