"""A sweep's pairs wired: each pair's settings from the plan, checked, and the executor that runs them.

``run.executor=local`` runs the pairs in this process (``application.sweep.LocalPairs``),
each model loaded once for all its benchmarks (``application.sweep_evaluator``);
``run.executor=ray`` runs every pair as a Ray task (``adapters.ray.sweep.RayPairs``) that evaluates it as a local run would, writing
through the driver's store.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable, Mapping

from culturebias.application.sweep import LocalPairs, SweepPlan, run_pair
from culturebias.application.sweep_evaluator import Evaluate, ModelByModel
from culturebias.bootstrap.container import SharedModel
from culturebias.bootstrap.registry import require_modules
from culturebias.bootstrap.settings import RaySettings, Settings
from culturebias.domain.errors import ConfigError
from culturebias.ports.run_archive import RunArchive
from culturebias.ports.sweeps import PairExecutor


def pair_settings(
    sweep: SweepPlan, names: list[str], store: Path, make_settings: Callable[..., Settings]
) -> dict[tuple[str, str], Settings]:
    """Every (model, benchmark) pair's settings, each model's and each benchmark's checked before the first pair runs."""
    settings = {}
    for name, model in zip(sweep.model_names(), sweep.models):
        try:
            settings[name] = make_settings(
                model={k: v for k, v in model.items() if k != "name"},
                data=sweep.data or None,
                options=sweep.protocol,
                judge=sweep.judge or None,
                run=sweep.run or None,
                store={"backend": "sqlite", "path": str(store)},
            )
            settings[name].model.backend_options()
        except ConfigError as error:
            raise ConfigError(f"sweep: model {name!r}: {error}") from None
    return {(m, b): s.for_benchmark(b, names) for m, s in settings.items() for b in names}


def pair_executor(
    sweep: SweepPlan,
    per_pair: Mapping[tuple[str, str], Settings],
    store: Path,
    *,
    evaluate: Evaluate,
    archive: RunArchive,
    progress_bar: bool,
) -> PairExecutor:
    """The executor the pairs' ``run.executor`` asks for; a Ray cluster is reached and checked here, before anything is written."""
    if any(s.run.executor == "ray" for s in per_pair.values()):
        check_cluster(sweep.ray)
        from culturebias.adapters.ray.sweep import RayPairs

        return RayPairs(sweep.ray, per_pair, functools.partial(run_pair_in_task, evaluate), functools.partial(archive.open_store, store))
    return LocalPairs(ModelByModel(evaluate, per_pair, progress_bar, SharedModel), archive, store)


def check_cluster(settings: RaySettings) -> None:
    """The cluster is reachable and can hold one pair, before the sweep writes anything."""
    require_modules("run.executor=ray", ("ray",), "ray")
    from culturebias.adapters.ray.cluster import check_resources, connect

    connect(settings.address, settings.connect_timeout)
    check_resources(1, settings.cpus, settings.gpus, what="sweep pair")


def run_pair_in_task(evaluate: Evaluate, benchmark: str, settings: Settings, resume: bool, store: Any, out: Path) -> str:  # Any: run_evaluation's keyword arguments and result
    """One pair, inside its Ray task: the local executor, results into ``store``, files into ``out``."""
    local = settings.model_copy(update={"run": settings.run.model_copy(update={"executor": "local", "progress": "never"})})
    return run_pair(lambda again: evaluate(benchmark, local, out=out, resume=again, store=store).run_id, resume)
