"""Result stores: runs, their per-item results and summaries, written in transactions."""

from __future__ import annotations

from typing import Any, Mapping, Protocol, runtime_checkable

from culturebias.domain.runs import RunLease, RunManifest, StageProgress


@runtime_checkable
class ResultStore(Protocol):
    """Per-item results are keyed by (run, stage, key); payloads are JSON objects.

    ``save_results`` is atomic: after a crash either the whole batch is stored or
    none of it, together with the stage's ``progress`` when one is given (what
    ``RunManifest.progress`` then reports for that stage). A stage is a named kind
    of result (e.g. ``loglikelihood``); stores treat the name as opaque.
    """

    def create_run(self, manifest: RunManifest) -> None: ...

    def get_run(self, run_id: str) -> RunManifest | None: ...

    def find_runs(self, benchmark: str | None = None) -> list[RunManifest]: ...

    def load_results(self, run_id: str, stage: str) -> dict[str, dict[str, Any]]: ...  # JSON boundary

    def save_results(
        self,
        run_id: str,
        stage: str,
        results: Mapping[str, Mapping[str, Any]],  # JSON boundary
        progress: StageProgress | None = None,
    ) -> None: ...

    def finish_run(self, run_id: str, summary: Mapping[str, Any]) -> None: ...  # JSON boundary: summary.json

    def mark_failed(self, run_id: str, reason: str) -> None: ...

    def mark_interrupted(self, run_id: str, reason: str) -> None:
        """Status ``interrupted``: stopped by a signal after storing what was computed."""
        ...

    def mark_running(self, run_id: str) -> None:
        """Status back to ``running`` (and no failure) when ``--resume`` continues a run."""
        ...

    def load_summary(self, run_id: str) -> dict[str, Any] | None: ...  # JSON boundary: summary.json

    def acquire_lease(self, run_id: str, lease: RunLease, stale_before: str, replacing: str | None = None) -> RunLease | None:
        """Make ``lease`` the run's lease, unless another lease holds it: None when taken, else that holder.

        Taken when the run has no lease, when the held one is ``lease``'s own (same token), when its
        heartbeat is older than ``stale_before``, or when its token is ``replacing`` (a holder the caller
        found dead).
        """
        ...

    def renew_lease(self, run_id: str, token: str, heartbeat_at: str) -> bool:
        """Move the heartbeat of the lease ``token`` holds; False when it holds the run no longer."""
        ...

    def release_lease(self, run_id: str, token: str) -> None:
        """Drop the lease ``token`` holds (nothing if another holds the run now)."""
        ...

    def close(self) -> None: ...
