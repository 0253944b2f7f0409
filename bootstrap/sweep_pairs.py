"""``culturebias sweep`` with ``run.executor=ray``: every pending (model, benchmark) pair as one Ray task.

Each task runs the pair as a local run would (its model loaded in the task, the
local executor there), writing through the driver's store; the driver writes
the pair's files into ``OUT/<model>/<benchmark>/`` and ``sweep.json`` as pairs finish.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable

from culturebias.bootstrap.registry import require_modules
from culturebias.bootstrap.settings import RaySettings, Settings
from culturebias.domain.errors import ResumeMismatchError
from culturebias.domain.redaction import redact_text


def check_cluster(settings: RaySettings) -> None:
    """The cluster is reachable and can hold one pair, before the sweep writes anything."""
    require_modules("run.executor=ray", ("ray",), "ray")
    from culturebias.adapters.ray.cluster import check_resources, connect

    connect(settings.address, settings.connect_timeout)
    check_resources(1, settings.cpus, settings.gpus, what="sweep pair")


def run_pair_in_task(benchmark: str, settings: Settings, resume: bool, store: Any, out: Path) -> str:
    """One pair, inside its Ray task: the local executor, results into ``store``, files into ``out``."""
    from culturebias.bootstrap.api import run_evaluation

    local = settings.model_copy(update={"run": settings.run.model_copy(update={"executor": "local", "progress": "never"})})
    try:
        return run_evaluation(benchmark, local, out=out, resume=resume, store=store).run_id
    except ResumeMismatchError:  # the store's unfinished run of this benchmark is another pair's
        return run_evaluation(benchmark, local, out=out, resume=False, store=store).run_id


def run_pairs_on_ray(
    ray_settings: RaySettings, result: Any, per_pair: dict[tuple[str, str], Settings], store: Path, *, resume: bool, save: Callable[[], None]
) -> None:
    """Run every unfinished pair of ``result`` (a ``SweepResult``) as a Ray task, updating it as each ends."""
    from culturebias.adapters.ray.sweep import PairDone, PairTask, run_pairs
    from culturebias.bootstrap.api import open_store
    from culturebias.adapters.output_folder import make_output_folder

    pending = [p for p in result.pairs if p.status != "finished"]
    for pair in pending:
        pair.status, pair.error = "running", None
    save()

    def done(outcome: PairDone) -> None:
        pair = result.pair(outcome.model, outcome.benchmark)
        folder = Path(pair.out)
        make_output_folder(folder)
        for name, content in outcome.files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(content)
        pair.worker = outcome.worker
        pair.run_id = outcome.run_id or pair.run_id
        if outcome.error is None:
            pair.status = "finished"
        else:
            pair.status, pair.error = "failed", redact_text(outcome.error)
        save()

    tasks = [PairTask(p.model, p.benchmark, per_pair[(p.model, p.benchmark)], resume) for p in pending]
    run_pairs(tasks, run_pair_in_task, functools.partial(open_store, store), ray_settings, done)
