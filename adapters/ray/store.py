"""A result store that lives with the driver: Ray tasks on any node write through it, the driver's process alone opens it.

``StoreHost`` is an actor pinned to the driver's node that opens the store
(an SQLite file there is reachable from no other node) and runs every call in
turn; ``RemoteStore`` is the ``ResultStore`` a task holds, forwarding each call.
Store errors come back as the store's own typed errors.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from culturebias.adapters.ray.replica import Failure
from culturebias.domain.runs import RunManifest, StageProgress


class StoreHost:
    def __init__(self, opener: Callable[[], Any]):  # Any: opens a ResultStore
        self._store = opener()

    def call(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Failure | None]:  # Any: any ResultStore method's arguments and result
        try:
            return getattr(self._store, method)(*args, **kwargs), None
        except Exception as error:  # noqa: BLE001  raised again in the task that called
            return None, Failure.of(error)


def host_store(opener: Callable[[], Any]) -> Any:  # Any: opens a ResultStore; a Ray actor handle
    """The store host actor, on this (the driver's) node."""
    here = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)
    return ray.remote(StoreHost).options(num_cpus=0, scheduling_strategy=here).remote(opener)


class RemoteStore:
    """``ports.results.ResultStore`` through a ``StoreHost``; remembers the runs it created or resumed."""

    def __init__(self, host: Any):  # Any: a Ray actor handle
        self._host = host
        self.runs: list[str] = []

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:  # Any: any ResultStore method's arguments and result
        value, failure = ray.get(self._host.call.remote(method, args, kwargs))
        if failure is not None:
            raise failure.exception()
        return value

    def create_run(self, manifest: RunManifest) -> None:
        self._call("create_run", manifest)
        self.runs.append(manifest.run_id)

    def get_run(self, run_id: str) -> RunManifest | None:
        return self._call("get_run", run_id)

    def find_runs(self, benchmark: str | None = None) -> list[RunManifest]:
        return self._call("find_runs", benchmark)

    def load_results(self, run_id: str, stage: str) -> dict[str, dict[str, Any]]:  # Any: JSON payloads (the ResultStore port's)
        return self._call("load_results", run_id, stage)

    def save_results(
        self, run_id: str, stage: str, results: Mapping[str, Mapping[str, Any]], progress: StageProgress | None = None  # Any: JSON payloads (the ResultStore port's)
    ) -> None:
        self._call("save_results", run_id, stage, dict(results), progress=progress)

    def finish_run(self, run_id: str, summary: Mapping[str, Any]) -> None:  # Any: JSON payloads (the ResultStore port's)
        self._call("finish_run", run_id, dict(summary))

    def mark_failed(self, run_id: str, reason: str) -> None:
        self._call("mark_failed", run_id, reason)

    def mark_interrupted(self, run_id: str, reason: str) -> None:
        self._call("mark_interrupted", run_id, reason)

    def mark_running(self, run_id: str) -> None:
        self._call("mark_running", run_id)
        self.runs.append(run_id)

    def load_summary(self, run_id: str) -> dict[str, Any] | None:  # Any: JSON payloads (the ResultStore port's)
        return self._call("load_summary", run_id)

    def close(self) -> None:
        pass  # the host's store is closed by the driver, after the sweep
