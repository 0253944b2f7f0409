"""Sweeps: models × benchmarks into one result store, resumable as a whole, then one comparison per benchmark.

A sweep file (TOML) or dict::

    benchmarks = ["kobbq", "cbbq"]
    [[models]]
    name = "small"            # its folder: OUT/small/<benchmark>/
    backend = "hf"
    path = "/models/small"    # every other key is a model.* setting
    [protocol.kobbq]          # optional: as --set protocol.kobbq.KEY=V
    prompts = "1,2"
    [run]                     # optional: run.* settings of every pair

Every pair runs into ``OUT/results.sqlite``. A pair that fails is recorded with
its error and the others go on; ``OUT/sweep.json`` lists each pair's status and
run id and is rewritten after every pair, so a killed sweep resumes from it.

Bootstrap wires the pairs' settings and their executor (this process, or Ray tasks
with ``run.executor = "ray"``); this module decides what runs, records how each
pair ended and compares the finished runs.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from culturebias.application.out_folder import write_text_atomically
from culturebias.domain.errors import ConfigError, CultureBiasError, ResumeMismatchError
from culturebias.domain.ray_options import RayOptions
from culturebias.domain.redaction import redact_text
from culturebias.ports.output_folders import OutputFolders
from culturebias.ports.run_archive import RunArchive
from culturebias.ports.sweeps import PairEvaluator, PairExecutor, PairOutcome, PairTask

SWEEP_FILE = "sweep.json"
STORE_FILE = "results.sqlite"
_FOLDER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class SweepPlan(BaseModel):
    """What a sweep runs: each model on each benchmark, with shared protocol, data, judge and run settings."""

    model_config = ConfigDict(extra="forbid")

    models: list[dict[str, Any]] = Field(min_length=1)  # Any: a TOML table of settings
    benchmarks: list[str] = Field(min_length=1)
    protocol: dict[str, Any] = Field(default_factory=dict)  # Any: a TOML table of settings
    data: dict[str, Any] = Field(default_factory=dict)  # Any: a TOML table of settings
    judge: dict[str, Any] = Field(default_factory=dict)  # Any: a TOML table of settings
    run: dict[str, Any] = Field(default_factory=dict)  # Any: a TOML table of settings
    ray: RayOptions = Field(default_factory=RayOptions)  # with run.executor = "ray": each pair a Ray task

    def model_names(self) -> list[str]:
        names = []
        for n, model in enumerate(self.models, start=1):
            name = model.get("name")
            if not isinstance(name, str) or not _FOLDER_NAME.match(name):
                raise ConfigError(
                    f"sweep: models[{n}].name must be a folder name (letters, digits, '.', '_', '-'), got {name!r}"
                )
            if name in names:
                raise ConfigError(f"sweep: two models are named {name!r}; each model's name is its folder")
            names.append(name)
        return names


PairStatus = Literal["pending", "running", "finished", "failed"]


class SweepPair(BaseModel):
    model: str
    benchmark: str
    status: PairStatus = "pending"
    run_id: str | None = None
    out: str
    error: str | None = None
    worker: str | None = None  # pid@host of the Ray task that ran the pair (run.executor=ray)


class SweepComparison(BaseModel):
    benchmark: str
    status: Literal["written", "skipped", "failed"]
    runs: list[str]
    path: str | None = None
    reason: str | None = None


class SweepResult(BaseModel):
    """``sweep.json``: each pair's status and run id, and each benchmark's comparison."""

    out: str
    store: str
    pairs: list[SweepPair]
    comparisons: list[SweepComparison] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(p.status == "finished" for p in self.pairs) and all(c.status != "failed" for c in self.comparisons)

    def pair(self, model: str, benchmark: str) -> SweepPair:
        return next(p for p in self.pairs if p.model == model and p.benchmark == benchmark)


def load_plan(plan: str | Path | Mapping[str, Any]) -> SweepPlan:  # Any: a TOML table of settings
    """A sweep plan from a TOML file or a dict; a bad one is a ``ConfigError`` naming the key."""
    where = "sweep"
    if isinstance(plan, (str, Path)):
        file = Path(plan).expanduser()
        where = str(file)
        if not file.is_file():
            raise ConfigError(f"sweep file {file} does not exist")
        try:
            values: Any = tomllib.loads(file.read_text(encoding="utf-8"))  # Any: TOML values
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"sweep file {file}: {error}") from None
        except UnicodeDecodeError as error:
            raise ConfigError(f"sweep file {file}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    else:
        values = dict(plan)
    try:
        parsed = SweepPlan.model_validate(values)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{where}: {key}: {first['msg']}") from None
    parsed.model_names()
    return parsed


# Compares finished runs (ids in the store) into a folder; returns the comparison.json written.
Compare = Callable[[list[str], Path, Path], Path]


def run_sweep(
    sweep: SweepPlan,
    names: list[str],
    out_dir: Path,
    *,
    resume: bool,
    executor: PairExecutor,
    folders: OutputFolders,
    archive: RunArchive,
    compare: Compare,
) -> SweepResult:
    """Run the plan's unfinished pairs into ``out_dir/results.sqlite``, then compare each benchmark's finished runs.

    ``names`` are the plan's benchmarks as registered; every pair's settings were checked when
    ``executor`` was built. With ``resume`` a pair finished in the store is skipped and an unfinished one continues.
    """
    store = out_dir / STORE_FILE
    folders.make(out_dir)
    before = _previous(out_dir) if resume else {}
    result = SweepResult(
        out=str(out_dir),
        store=str(store),
        pairs=[SweepPair(model=m, benchmark=b, out=str(out_dir / m / b)) for m in sweep.model_names() for b in names],
    )
    for pair in result.pairs:
        done = before.get((pair.model, pair.benchmark))
        if done is not None and done.status == "finished" and done.run_id and _finished_in(archive, store, done.run_id):
            pair.status, pair.run_id, pair.worker = "finished", done.run_id, done.worker
        elif done is not None:
            pair.run_id = done.run_id  # the unfinished run --resume continues
    _save(out_dir, result)

    def started(task: PairTask) -> None:
        pair = result.pair(task.model, task.benchmark)
        pair.status, pair.error = "running", None
        _save(out_dir, result)

    def finished(outcome: PairOutcome) -> None:
        pair = result.pair(outcome.model, outcome.benchmark)
        if outcome.files:  # a pair run elsewhere: its files go where a local run writes them (none: nothing made)
            folder = Path(pair.out)
            folders.make(folder)
            for name, content in outcome.files.items():
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / name).write_bytes(content)
        pair.worker = outcome.worker
        pair.run_id = outcome.run_id or pair.run_id  # a failed resume keeps the run it continued
        if outcome.error is None:
            pair.status = "finished"
        else:
            pair.status, pair.error = "failed", redact_text(outcome.error)
        _save(out_dir, result)

    tasks = [PairTask(p.model, p.benchmark, Path(p.out), resume) for p in result.pairs if p.status != "finished"]
    executor.run(tasks, started, finished)
    result.comparisons = [_compare(result, benchmark, out_dir, store, compare) for benchmark in names]
    _save(out_dir, result)
    return result


def run_pair(evaluate: Callable[[bool], str], resume: bool) -> str:
    """One pair's run id: ``evaluate(resume)``, and a new run where the store's unfinished run is not this pair's."""
    try:
        return evaluate(resume)
    except ResumeMismatchError:
        # The store's unfinished run of this benchmark is another pair's, or this pair's settings changed.
        return evaluate(False)


class LocalPairs:
    """The executor of ``run.executor = "local"``: pairs one after another in this process."""

    def __init__(self, evaluate: PairEvaluator, archive: RunArchive, store: Path):
        self._evaluate = evaluate
        self._archive = archive
        self._store = store

    def run(self, tasks: Sequence[PairTask], on_start: Callable[[PairTask], None], on_done: Callable[[PairOutcome], None]) -> None:
        for task in tasks:
            on_start(task)
            earlier = _run_ids(self._archive, self._store, task.benchmark)
            try:
                run_id = run_pair(lambda resume: self._evaluate(task.model, task.benchmark, task.out, resume), task.resume)
            except Exception as error:  # noqa: BLE001  one model's failure is recorded; the others run
                new = _run_ids(self._archive, self._store, task.benchmark) - earlier
                # The run the failed pair added; else the resumed run, or none was created.
                on_done(PairOutcome(task.model, task.benchmark, new.pop() if len(new) == 1 else None, f"{type(error).__name__}: {error}"))
            else:
                on_done(PairOutcome(task.model, task.benchmark, run_id))


def _compare(result: SweepResult, benchmark: str, out_dir: Path, store: Path, compare: Compare) -> SweepComparison:
    runs = [p.run_id for p in result.pairs if p.benchmark == benchmark and p.status == "finished" and p.run_id]
    if len(runs) < 2:
        return SweepComparison(benchmark=benchmark, status="skipped", runs=runs, reason="fewer than two finished runs")
    folder = out_dir / f"comparison-{benchmark}"
    try:
        written = compare(runs, folder, store)
    except CultureBiasError as error:
        return SweepComparison(benchmark=benchmark, status="failed", runs=runs, reason=redact_text(str(error)))
    return SweepComparison(benchmark=benchmark, status="written", runs=runs, path=str(written))


def _previous(out_dir: Path) -> dict[tuple[str, str], SweepPair]:
    file = out_dir / SWEEP_FILE
    if not file.is_file():
        return {}
    try:
        stored = SweepResult.model_validate_json(file.read_text(encoding="utf-8"))
    except (ValidationError, UnicodeDecodeError):
        return {}  # an unreadable record: every pair runs (each resumes its stored run where one matches)
    return {(p.model, p.benchmark): p for p in stored.pairs}


def _finished_in(archive: RunArchive, store: Path, run_id: str) -> bool:
    if not store.is_file():
        return False
    opened = archive.open_store(store, must_exist=True)
    try:
        manifest = opened.get_run(run_id)
        return manifest is not None and manifest.status == "finished"
    finally:
        opened.close()


def _run_ids(archive: RunArchive, store: Path, benchmark: str) -> set[str]:
    """The ids of the benchmark's runs in the store: a failed pair's run is the one it added."""
    if not store.is_file():
        return set()
    opened = archive.open_store(store, must_exist=True)
    try:
        return {m.run_id for m in opened.find_runs(benchmark)}
    finally:
        opened.close()


def _save(out_dir: Path, result: SweepResult) -> None:
    write_text_atomically(out_dir / SWEEP_FILE, result.model_dump_json(indent=2))
