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
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from culturebias.application.out_folder import write_text_atomically
from culturebias.domain.errors import ConfigError, CultureBiasError, ResumeMismatchError
from culturebias.bootstrap.settings import RaySettings
from culturebias.domain.redaction import redact_text

SWEEP_FILE = "sweep.json"
STORE_FILE = "results.sqlite"
_FOLDER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class SweepPlan(BaseModel):
    """What a sweep runs: each model on each benchmark, with shared protocol, data, judge and run settings."""

    model_config = ConfigDict(extra="forbid")

    models: list[dict[str, Any]] = Field(min_length=1)
    benchmarks: list[str] = Field(min_length=1)
    protocol: dict[str, Any] = Field(default_factory=dict)
    data: dict[str, Any] = Field(default_factory=dict)
    judge: dict[str, Any] = Field(default_factory=dict)
    run: dict[str, Any] = Field(default_factory=dict)
    ray: RaySettings = Field(default_factory=RaySettings)  # with run.executor = "ray": each pair a Ray task

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


def load_plan(plan: str | Path | Mapping[str, Any]) -> SweepPlan:
    """A sweep plan from a TOML file or a dict; a bad one is a ``ConfigError`` naming the key."""
    where = "sweep"
    if isinstance(plan, (str, Path)):
        file = Path(plan).expanduser()
        where = str(file)
        if not file.is_file():
            raise ConfigError(f"sweep file {file} does not exist")
        try:
            values: Any = tomllib.loads(file.read_text(encoding="utf-8"))
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


def _pair_settings(plan: SweepPlan, model: Mapping[str, Any], store: Path):
    from culturebias.bootstrap.api import make_settings

    return make_settings(
        model={k: v for k, v in model.items() if k != "name"},
        data=plan.data or None,
        options=plan.protocol,
        judge=plan.judge or None,
        run=plan.run or None,
        store={"backend": "sqlite", "path": str(store)},
    )


def run_sweep(
    plan: str | Path | Mapping[str, Any], *, out: str | Path, resume: bool = False, progress_bar: bool = False
) -> SweepResult:
    from culturebias.bootstrap.api import benchmark_names, run_evaluation
    from culturebias.bootstrap.container import SharedModel
    from culturebias.adapters.output_folder import check_output_folder, make_output_folder

    sweep = load_plan(plan)
    names = benchmark_names(sweep.benchmarks)
    out_dir = Path(out).expanduser()
    check_output_folder(out_dir)
    store = out_dir / STORE_FILE
    # Every model's settings and every benchmark's options are checked before the first pair runs.
    settings = {}
    for name, model in zip(sweep.model_names(), sweep.models):
        try:
            settings[name] = _pair_settings(sweep, model, store)
            settings[name].model.backend_options()
        except ConfigError as error:
            raise ConfigError(f"sweep: model {name!r}: {error}") from None
    per_pair = {(m, b): s.for_benchmark(b, names) for m, s in settings.items() for b in names}
    on_ray = any(s.run.executor == "ray" for s in settings.values())
    if on_ray:
        from culturebias.bootstrap.sweep_pairs import check_cluster, run_pairs_on_ray

        check_cluster(sweep.ray)
    make_output_folder(out_dir)
    before = _previous(out_dir) if resume else {}
    result = SweepResult(
        out=str(out_dir),
        store=str(store),
        pairs=[SweepPair(model=m, benchmark=b, out=str(out_dir / m / b)) for m in settings for b in names],
    )
    for pair in result.pairs:
        done = before.get((pair.model, pair.benchmark))
        if done is not None and done.status == "finished" and done.run_id and _finished_in(store, done.run_id):
            pair.status, pair.run_id, pair.worker = "finished", done.run_id, done.worker
        elif done is not None:
            pair.run_id = done.run_id  # the unfinished run --resume continues
    _save(out_dir, result)

    if on_ray:
        run_pairs_on_ray(sweep.ray, result, per_pair, store, resume=resume, save=lambda: _save(out_dir, result))
    for model in [] if on_ray else settings:
        shared = SharedModel()  # one model load for all its benchmarks
        for pair in (p for p in result.pairs if p.model == model and p.status != "finished"):
            pair.status, pair.error = "running", None
            _save(out_dir, result)
            pair_settings = per_pair[(model, pair.benchmark)]
            earlier = _run_ids(store, pair.benchmark)
            try:
                try:
                    outcome = run_evaluation(
                        pair.benchmark, pair_settings, out=pair.out, resume=resume, progress_bar=progress_bar, shared_model=shared
                    )
                except ResumeMismatchError:
                    # The store's unfinished run of this benchmark is another pair's, or this pair's settings changed.
                    outcome = run_evaluation(
                        pair.benchmark, pair_settings, out=pair.out, resume=False, progress_bar=progress_bar, shared_model=shared
                    )
            except Exception as error:  # noqa: BLE001  one model's failure is recorded; the others run
                pair.status, pair.error = "failed", redact_text(f"{type(error).__name__}: {error}")
                new = _run_ids(store, pair.benchmark) - earlier
                pair.run_id = new.pop() if len(new) == 1 else pair.run_id  # else the resumed run, or none was created
            else:
                pair.status, pair.run_id = "finished", outcome.run_id
            _save(out_dir, result)

    result.comparisons = [_compare(result, benchmark, out_dir, store) for benchmark in names]
    _save(out_dir, result)
    return result


def _compare(result: SweepResult, benchmark: str, out_dir: Path, store: Path) -> SweepComparison:
    from culturebias.application.compare_runs import compare_runs

    runs = [p.run_id for p in result.pairs if p.benchmark == benchmark and p.status == "finished" and p.run_id]
    if len(runs) < 2:
        return SweepComparison(benchmark=benchmark, status="skipped", runs=runs, reason="fewer than two finished runs")
    folder = out_dir / f"comparison-{benchmark}"
    try:
        written = compare_runs(runs, out=folder, store=store)
    except CultureBiasError as error:
        return SweepComparison(benchmark=benchmark, status="failed", runs=runs, reason=redact_text(str(error)))
    return SweepComparison(benchmark=benchmark, status="written", runs=runs, path=str(written.comparison_path))


def _previous(out_dir: Path) -> dict[tuple[str, str], SweepPair]:
    file = out_dir / SWEEP_FILE
    if not file.is_file():
        return {}
    try:
        stored = SweepResult.model_validate_json(file.read_text(encoding="utf-8"))
    except (ValidationError, UnicodeDecodeError):
        return {}  # an unreadable record: every pair runs (each resumes its stored run where one matches)
    return {(p.model, p.benchmark): p for p in stored.pairs}


def _finished_in(store: Path, run_id: str) -> bool:
    if not store.is_file():
        return False
    from culturebias.bootstrap.api import open_store

    opened = open_store(store, must_exist=True)
    try:
        manifest = opened.get_run(run_id)
        return manifest is not None and manifest.status == "finished"
    finally:
        opened.close()


def _run_ids(store: Path, benchmark: str) -> set[str]:
    """The ids of the benchmark's runs in the store: a failed pair's run is the one it added."""
    if not store.is_file():
        return set()
    from culturebias.bootstrap.api import open_store

    opened = open_store(store, must_exist=True)
    try:
        return {m.run_id for m in opened.find_runs(benchmark)}
    finally:
        opened.close()


def _save(out_dir: Path, result: SweepResult) -> None:
    write_text_atomically(out_dir / SWEEP_FILE, result.model_dump_json(indent=2))
