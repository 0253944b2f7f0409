"""A result store in process memory: for tests and for embedding hosts that keep nothing on disk.

It passes the same contract as the SQLite and JSONL stores except durability:
nothing survives the process, so ``--resume`` across processes needs a file store.
"""

from __future__ import annotations

import copy
import threading
from pathlib import Path
from typing import Any, Mapping

from culturebias.adapters.stores.common import StatusMarks
from culturebias.domain.runs import RunLease, RunManifest, StageProgress, utc_now


class MemoryResultStore(StatusMarks):
    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else None  # accepted for a uniform factory; unused
        self._lock = threading.Lock()
        self._runs: dict[str, RunManifest] = {}
        self._results: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}  # Any: JSON payloads (the ResultStore port's)
        self._summaries: dict[str, dict[str, Any]] = {}  # Any: JSON payloads (the ResultStore port's)
        self._leases: dict[str, RunLease] = {}

    def create_run(self, manifest: RunManifest) -> None:
        with self._lock:
            if manifest.run_id in self._runs:
                raise ValueError(f"run {manifest.run_id} already exists")
            self._runs[manifest.run_id] = manifest.model_copy(deep=True)

    def _read(self, run: RunManifest) -> RunManifest:
        return run.model_copy(deep=True, update={"lease": self._leases.get(run.run_id)})

    def get_run(self, run_id: str) -> RunManifest | None:
        run = self._runs.get(run_id)
        return self._read(run) if run else None

    def find_runs(self, benchmark: str | None = None) -> list[RunManifest]:
        runs = [r for r in self._runs.values() if benchmark is None or r.benchmark == benchmark]
        return [self._read(r) for r in sorted(runs, key=lambda r: r.created_at)]

    def load_results(self, run_id: str, stage: str) -> dict[str, dict[str, Any]]:  # Any: JSON payloads (the ResultStore port's)
        return copy.deepcopy(self._results.get((run_id, stage), {}))

    def save_results(
        self, run_id: str, stage: str, results: Mapping[str, Mapping[str, Any]], progress: StageProgress | None = None  # Any: JSON payloads (the ResultStore port's)
    ) -> None:
        batch = {key: copy.deepcopy(dict(payload)) for key, payload in results.items()}  # copied first: all or nothing
        with self._lock:
            self._results.setdefault((run_id, stage), {}).update(batch)
            if progress is not None and run_id in self._runs:
                run = self._runs[run_id]
                self._runs[run_id] = run.model_copy(update={"progress": {**run.progress, stage: progress.model_copy()}})

    def finish_run(self, run_id: str, summary: Mapping[str, Any]) -> None:  # Any: JSON payloads (the ResultStore port's)
        with self._lock:
            self._summaries[run_id] = copy.deepcopy(dict(summary))
            self._runs[run_id] = self._runs[run_id].model_copy(
                update={"status": "finished", "finished_at": utc_now(), "failure": None}
            )

    def _set_status(self, run_id: str, status: str, failure: str | None) -> None:
        with self._lock:
            self._runs[run_id] = self._runs[run_id].model_copy(update={"status": status, "failure": failure})

    def load_summary(self, run_id: str) -> dict[str, Any] | None:  # Any: JSON payloads (the ResultStore port's)
        summary = self._summaries.get(run_id)
        return copy.deepcopy(summary) if summary is not None else None

    def acquire_lease(self, run_id: str, lease: RunLease, stale_before: str, replacing: str | None = None) -> RunLease | None:
        with self._lock:
            held = self._leases.get(run_id)
            if held is not None and not held.gives_way(lease, stale_before, replacing):
                return held
            self._leases[run_id] = lease
            return None

    def renew_lease(self, run_id: str, token: str, heartbeat_at: str) -> bool:
        with self._lock:
            held = self._leases.get(run_id)
            if held is None or held.token != token:
                return False
            self._leases[run_id] = held.model_copy(update={"heartbeat_at": heartbeat_at})
            return True

    def release_lease(self, run_id: str, token: str) -> None:
        with self._lock:
            if run_id in self._leases and self._leases[run_id].token == token:
                del self._leases[run_id]

    def close(self) -> None:
        pass
