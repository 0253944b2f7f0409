"""Sweep pairs as Ray tasks: each (model, benchmark) evaluation runs in a task with its own CPUs and GPUs.

A task loads its model itself (the local executor inside the task), writes its
results through the driver's store (``store.RemoteStore``) and returns the files
of its output folder, which the driver writes where a local sweep would. Pairs
finish in any order; ``on_done`` sees each as it finishes.
"""

from __future__ import annotations

import os
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import ray

from culturebias.domain.ray_options import RayOptions
from culturebias.adapters.ray.cluster import check_resources, connect
from culturebias.adapters.ray.store import RemoteStore, host_store
from culturebias.ports.sweeps import PairOutcome, PairTask

# run_one(benchmark, settings, resume, store, out) -> run id; it writes the pair's files into ``out``.
PairRunner = Callable[[str, Any, bool, Any, Path], str]  # Any: bootstrap's Settings and the driver's store (adapters do not import bootstrap)


@dataclass(frozen=True)
class _RemotePair:
    model: str
    benchmark: str
    settings: Any  # Any: bootstrap's Settings (adapters do not import bootstrap)
    resume: bool


def _run_pair(run_one: PairRunner, task: _RemotePair, host: Any) -> PairOutcome:  # Any: a Ray actor handle
    store = RemoteStore(host)
    worker = f"{os.getpid()}@{socket.gethostname()}"
    with tempfile.TemporaryDirectory(prefix="culturebias-pair-") as folder:
        out = Path(folder) / "out"
        try:
            run_id: str | None = run_one(task.benchmark, task.settings, task.resume, store, out)
            error = None
        except Exception as failure:  # noqa: BLE001  one pair's failure is recorded; the others run
            run_id, error = (store.runs[-1] if store.runs else None), f"{type(failure).__name__}: {failure}"
        files = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} if out.is_dir() else {}
    return PairOutcome(task.model, task.benchmark, run_id, error, worker, files)


class RayPairs:
    """PairExecutor of ``run.executor = "ray"``: every pair at once as a Ray task (Ray queues what does not fit).

    ``settings`` holds each (model, benchmark) pair's settings, handed to ``run_one`` in its task;
    ``open_store`` opens the sweep's store on the driver.
    """

    def __init__(self, options: RayOptions, settings: Mapping[tuple[str, str], Any], run_one: PairRunner, open_store: Callable[[], Any]):  # Any: each pair's Settings and store (bootstrap types that adapters do not import)
        self._options = options
        self._settings = settings
        self._run_one = run_one
        self._open_store = open_store

    def run(self, tasks: Sequence[PairTask], on_start: Callable[[PairTask], None], on_done: Callable[[PairOutcome], None]) -> None:
        for task in tasks:
            on_start(task)
        run_pairs(
            [_RemotePair(t.model, t.benchmark, self._settings[(t.model, t.benchmark)], t.resume) for t in tasks],
            self._run_one,
            self._open_store,
            self._options,
            on_done,
        )


def run_pairs(
    tasks: Sequence[_RemotePair],
    run_one: PairRunner,
    open_store: Callable[[], Any],  # Any: opens the driver's ResultStore
    options: RayOptions,
    on_done: Callable[[PairOutcome], None],
) -> None:
    """Every task at once on the cluster (Ray queues what does not fit); ``on_done`` on the driver as each ends."""
    if not tasks:
        return
    connect(options.address, options.connect_timeout)
    check_resources(1, options.cpus, options.gpus, what="sweep pair")
    host = host_store(open_store)
    remote = ray.remote(_run_pair).options(num_cpus=options.cpus, num_gpus=options.gpus)
    flying = {remote.remote(run_one, task, host): task for task in tasks}
    try:
        while flying:
            ready, _ = ray.wait(list(flying), num_returns=1)
            for ref in ready:
                task = flying.pop(ref)
                try:
                    done = ray.get(ref)
                except ray.exceptions.RayError as error:  # the task's process died more often than Ray retries
                    done = PairOutcome(task.model, task.benchmark, None, f"{type(error).__name__}: {error}", "", {})
                on_done(done)
    finally:
        ray.kill(host)
