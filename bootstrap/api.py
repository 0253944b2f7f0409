"""The public Python API: what ``culturebias.evaluate`` and friends are.

Embedding hosts call these; the CLI is a thin layer over the same functions.
Nothing here calls ``sys.exit``, configures the host's logging (unless
``configure_logging=True``) or draws on the terminal (unless ``progress_bar=True``):
log events are ``logging`` records under ``culturebias`` (``culturebias.logs``), and the
bars and warnings of the libraries a call uses go there too (``adapters/progress/quiet.py``);
errors are the typed ones of ``culturebias.errors``. Every evaluation builds its
own container, so two evaluations in one process share no ports, models or stores;
``evaluate_many`` / ``run_evaluations`` share one model across their benchmarks on purpose.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from culturebias.application import run_listing
from culturebias.application.run_benchmark import RunResult
from culturebias.application.run_lease import DEFAULT_LEASE_SECONDS
from culturebias.bootstrap.archive import (  # noqa: F401  # public names of the facade
    ARCHIVE,
    load_summary,
    open_configured_store,
    open_store,
    store_location,
    summary_from_dict,
)
from culturebias.bootstrap.call_settings import (  # noqa: F401  # public names of the facade
    call_settings,
    embedded,
    make_settings,
    with_sample,
)
from culturebias.bootstrap.container import build_comparison_report
from culturebias.bootstrap.evaluation import (  # noqa: F401  # public names of the facade
    _ReadSource,
    benchmark_names,
    plan_evaluation,
    planned_run,
    run_evaluation,
    run_evaluations,
)
from culturebias.bootstrap.registry import BackendDescriptor, BenchmarkDescriptor, StoreDescriptor, registry
from culturebias.bootstrap.settings import DataSettings, ModelSettings, RunSettings, Settings, StoreSettings
from culturebias.domain.audit import ItemRecord
from culturebias.domain.comparison.envelope import Comparison
from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.runs import RunManifest
from culturebias.domain.summary import RunSummary
from culturebias.ports.progress import ProgressEvent
from culturebias.ports.results import ResultStore

if TYPE_CHECKING:
    from culturebias.application.compare import ComparisonResult
    from culturebias.domain.mcbe.consistency import JudgeConsistency
    from culturebias.domain.run_plan import RunPlan

__all__ = [
    "ARCHIVE", "RunResult", "backends", "benchmark_names", "benchmarks", "build_libra", "compare", "compare_runs",
    "evaluate", "evaluate_many", "export_meta_of", "export_samples", "judge_consistency", "leaderboard", "list_runs", "load_summary",
    "make_settings", "mark_interrupted", "open_configured_store", "open_store", "plan", "plan_evaluation",
    "planned_run", "run_evaluation", "run_evaluations", "samples", "store_location", "stores", "summary_from_dict",
    "summary_schema", "sweep", "with_sample",
]


def plan(
    benchmark: str,
    *,
    model: ModelSettings | Mapping[str, Any] | str | None = None,  # Any: JSON-like settings sections and the benchmark's own service, source and container
    data: DataSettings | Mapping[str, Any] | str | Path | None = None,  # Any: JSON-like settings sections and the benchmark's own service, source and container
    options: BaseModel | Mapping[str, Any] | None = None,  # Any: JSON-like settings sections and the benchmark's own service, source and container
    run: RunSettings | Mapping[str, Any] | None = None,  # Any: JSON-like settings sections and the benchmark's own service, source and container
    settings: Settings | None = None,
    sample: int | None = None,
    calibrate: bool = True,
) -> "RunPlan":
    """What a run of ``benchmark`` would ask of the model (``culturebias plan``): requests, tokens (the model's
    tokenizer, or an estimate marked so), distinct tokens after prefix sharing, an ETA from a short calibration
    on the model (``calibrate``), the cost of a priced model. Arguments as ``evaluate``'s."""
    with embedded(False):
        resolved, _ = call_settings(settings, model, data, with_sample(options, sample), None, None, run, False)
        return plan_evaluation(benchmark, resolved, calibrate=calibrate)


def evaluate(
    benchmark: str,
    *,
    model: ModelSettings | Mapping[str, Any] | str | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    data: DataSettings | Mapping[str, Any] | str | Path | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    options: BaseModel | Mapping[str, Any] | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    store: StoreSettings | Mapping[str, Any] | ResultStore | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    out: str | Path | None = None,
    resume: bool = False,
    on_progress: Callable[[ProgressEvent], None] | None = None,
    judge: Mapping[str, Any] | BaseModel | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    run: RunSettings | Mapping[str, Any] | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    settings: Settings | None = None,
    configure_logging: bool = False,
    sample: int | None = None,
) -> RunSummary:
    """Run one benchmark and return its typed summary (``summary.run_id`` names the run).

    ``sample=N`` is ``protocol.sample``: a seeded sample of about N items stratified by the
    benchmark's design cells (``summary.sample`` describes it).

    ``model``, ``data``, ``store``, ``judge`` and ``run`` are settings sections (a
    settings object, a dict of its keys, or for model/data a plain path);
    ``options`` are the benchmark's ``protocol.*`` options (its ``*Options`` object
    or a dict). With ``out`` the run also writes ``summary.json`` and the report
    there, and keeps its results in the configured store (``out/results.sqlite``
    by default); without it nothing is written and results stay in memory, unless
    ``store`` says otherwise. ``store`` may also be a ResultStore object the host owns.
    """
    with embedded(configure_logging):
        options = with_sample(options, sample)
        resolved, store_object = call_settings(settings, model, data, options, store, judge, run, configure_logging)
        result = run_evaluation(benchmark, resolved, out=out, resume=resume, on_progress=on_progress, store=store_object)
    return result.summary


def evaluate_many(
    benchmarks: str | Sequence[str],
    *,
    model: ModelSettings | Mapping[str, Any] | str | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    data: DataSettings | Mapping[str, Any] | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    options: Mapping[str, Any] | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    store: StoreSettings | Mapping[str, Any] | ResultStore | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    out: str | Path | None = None,
    resume: bool = False,
    on_progress: Callable[[ProgressEvent], None] | None = None,
    judge: Mapping[str, Any] | BaseModel | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    run: RunSettings | Mapping[str, Any] | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    settings: Settings | None = None,
    configure_logging: bool = False,
) -> dict[str, RunSummary]:
    """Run several benchmarks on one loaded model; their typed summaries by benchmark name.

    As ``evaluate``, with ``out/<benchmark>/`` for each. ``options`` holds keys that apply
    to every benchmark having them (``{"limit": 20}``) and one section per benchmark
    (``{"kobbq": {"prompts": "1,2"}}`` or ``{"kobbq": KoBBQOptions(...)}``); ``data`` gives
    each benchmark its folder (``{"twbias": {"path": "/data/twbias"}}``).
    """
    names = benchmark_names(benchmarks)
    sections = {
        key: value.model_dump() if isinstance(value, BaseModel) and key in names else value
        for key, value in (options or {}).items()
    }
    with embedded(configure_logging):
        resolved, store_object = call_settings(
            settings, model, data, sections if options is not None else None, store, judge, run, configure_logging
        )
        results = run_evaluations(names, resolved, out=out, resume=resume, on_progress=on_progress, store=store_object)
    return {name: result.summary for name, result in results.items()}


def list_runs(store: StoreSettings | Mapping[str, Any] | str | Path | ResultStore, benchmark: str | None = None) -> list[RunManifest]:  # Any: a settings section as a dict (TOML/JSON values)
    """Every run a store holds (oldest first), with status and, for a failed run, why it failed.

    Reading never creates a store: a path where none is raises ``ConfigError``.
    """
    return run_listing.list_runs(ARCHIVE, store, benchmark)


def mark_interrupted(
    store: StoreSettings | Mapping[str, Any] | str | Path | ResultStore, run_id: str, lease_seconds: float = DEFAULT_LEASE_SECONDS  # Any: a settings section as a dict (TOML/JSON values)
) -> RunManifest:
    """Mark a run that a process which is gone left ``running`` as ``interrupted``, so it shows as what it is;
    ``--resume`` continues it either way. Refused (``RunInUseError``) while a live process writes it."""
    return run_listing.mark_interrupted(ARCHIVE, store, run_id, lease_seconds)


def benchmarks() -> list[BenchmarkDescriptor]:
    return [d for d in registry().benchmarks.all() if isinstance(d, BenchmarkDescriptor)]


def backends() -> list[BackendDescriptor]:
    return [d for d in registry().backends.all() if isinstance(d, BackendDescriptor)]


def stores() -> list[StoreDescriptor]:
    return [d for d in registry().stores.all() if isinstance(d, StoreDescriptor)]


def summary_schema(benchmark: str) -> dict[str, Any]:  # Any: a JSON Schema
    """The JSON Schema of a benchmark's summary.json."""
    return registry().benchmark(benchmark).summary_model().model_json_schema(mode="serialization")


def compare(
    runs: Sequence[RunSummary | str | Path],
    out: str | Path | None = None,
    allow_data_mismatch: bool = False,
    *,
    store: StoreSettings | Mapping[str, Any] | str | Path | ResultStore | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    verdicts: Sequence[str | Path] = (),
) -> Comparison[Any]:  # Any: the benchmark's own comparison body
    """Compare finished runs of one benchmark; returns the typed comparison (comparison.json is its JSON).

    Each run is a typed summary, a run folder or summary.json, or a run id in
    ``store``. With ``out`` it writes ``comparison.json`` and ``comparison.md``
    there. Runs of other benchmarks, schema versions or data fingerprints raise
    ``ComparisonMismatchError`` (a ``ConfigError``) naming the run and the
    values; ``allow_data_mismatch=True`` compares across data versions and the
    comparison says so. The reports open with the verdict of each policy checked on the runs: those
    ``check --annotate-reports`` stored in the run folders, and the ``verdicts`` files (``check --json``).
    Loads no model.
    """
    with embedded(False):
        return compare_runs(runs, out=out, store=store, allow_data_mismatch=allow_data_mismatch, verdicts=verdicts).comparison


def compare_runs(
    runs: Sequence[RunSummary | str | Path],
    *,
    out: str | Path | None = None,
    store: StoreSettings | Mapping[str, Any] | str | Path | ResultStore | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    allow_data_mismatch: bool = False,
    verdicts: Sequence[str | Path] = (),
) -> ComparisonResult:
    """``compare`` with what it wrote: the ``ComparisonResult`` (comparison, comparison.json, report files)."""
    from culturebias.application.compare_runs import compare_runs as compare_
    from culturebias.adapters.policy.verdict_files import stored_verdicts

    checked = stored_verdicts(runs, verdicts) if out is not None else []
    return compare_(
        runs,
        out=out,
        store=store,
        allow_data_mismatch=allow_data_mismatch,
        archive=ARCHIVE,
        reports=lambda benchmark, items: build_comparison_report(benchmark, items, checked),
        comparers=lambda benchmark: registry().benchmark(benchmark).comparer(),
    )


def samples(
    run_ref: RunSummary | str | Path,
    where: dict[str, str] | None = None,
    limit: int | None = None,
    *,
    store: StoreSettings | Mapping[str, Any] | str | Path | ResultStore | None = None,  # Any: a settings section as a dict (TOML/JSON values)
) -> list[ItemRecord]:
    """A run's per-item audit trail: ``ItemRecord``s (``culturebias.domain.audit``), in recorded order.

    ``run_ref`` is a run folder or summary.json (a folder whose run was killed
    works too), or a run id in ``store``. ``where`` keeps the records whose
    fields equal the given texts: ``outcome``, ``parsed``, ``correct`` (true/false),
    ``item_id``, ``meta.<field>`` (or the bare metadata name), ``score.<name>``; a
    field no record has is a ``ConfigError``. Reads the store only; loads no model.
    """
    from culturebias.application.samples import load_samples

    return load_samples(run_ref, where, limit, store, archive=ARCHIVE)


def export_samples(
    run: RunSummary | str | Path | Sequence[RunSummary | str | Path],
    path: str | Path,
    format: str = "jsonl",
    *,
    where: dict[str, str] | None = None,
    limit: int | None = None,
    store: StoreSettings | Mapping[str, Any] | str | Path | ResultStore | None = None,  # Any: a settings section as a dict (TOML/JSON values)
) -> int:
    """Write the item records of a run, or of several runs into one table, to ``path`` as ``csv``, ``parquet``
    (needs the ``export`` extra) or ``jsonl``: one flat row per item naming its run (``run_id``, ``benchmark``,
    ``model``, ``model_fingerprint``), metadata as ``meta.<field>`` columns, numbers in one ``scores`` map: the one
    column set of every export, each column of the one type ``culturebias.domain.export_schema`` declares (lists as
    lists; docs/EXPORT_SCHEMA.md), so separately written tables concatenate. ``where``/``limit``
    apply to each run. Returns the rows written."""
    from culturebias.adapters.files.table_files import ItemTables
    from culturebias.application.samples import export_samples as export

    return export(
        run, path, format, where=where, limit=limit, store=store, archive=ARCHIVE, tables=ItemTables(), meta_columns=shared_export_meta
    )


def judge_consistency(
    run_a: RunSummary | str | Path,
    run_b: RunSummary | str | Path,
    human_file: str | Path,
    *,
    store: StoreSettings | Mapping[str, Any] | str | Path | ResultStore | None = None,  # Any: a settings section as a dict (TOML/JSON values)
) -> JudgeConsistency:
    """McBE's judge–human consistency rate (the paper's Table 13): the share of BEIs whose two BA answers (run A's
    and run B's) the judge scored in the order people chose in ``human_file`` (JSONL or CSV: ``item``, ``winner``
    a/b/tie), with its 95% Wilson interval, n and the rate per category. Reads the stores only; writes nothing."""
    from culturebias.adapters.mcbe.human_winners import HumanWinnersFile
    from culturebias.application.mcbe.consistency import judge_consistency as consistency_of

    return consistency_of(run_a, run_b, human_file, reader=HumanWinnersFile(), archive=ARCHIVE, store=store)


def export_meta_of(benchmark: str) -> dict[str, str]:
    """A benchmark's declared export metadata columns; a run of a benchmark not installed here: the common ones."""
    from culturebias.domain.export_schema import COMMON_META

    table = registry().benchmarks
    return registry().benchmark(benchmark).export_meta_columns() if benchmark in table.names() else dict(COMMON_META)


def shared_export_meta(_benchmark: str = "") -> dict[str, str]:
    """The metadata columns of every export: the fields every installed benchmark declares (one type per name)."""
    from culturebias.domain.errors import PluginError
    from culturebias.domain.export_schema import one_type_per_name

    declared = {}
    for name in registry().benchmarks.names():
        try:
            declared[name] = export_meta_of(name)
        except PluginError:  # a plugin that fails to load has no columns (and says why where it is used)
            continue
    try:
        return one_type_per_name(declared)
    except ValueError as clash:  # a plugin types a built-in's column apart
        raise PluginError(f"export columns: {clash}") from None


def leaderboard(
    store: StoreSettings | Mapping[str, Any] | str | Path | ResultStore,  # Any: a settings section as a dict (TOML/JSON values)
    benchmark: str | None = None,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
) -> list[Any]:  # Any: leaderboard rows and headlines of any benchmark
    """The runs of a store as leaderboard rows (oldest first): model, benchmark, status, progress,
    the benchmark's headline metrics (its descriptor's ``headlines``), why a run failed,
    and for an unfinished run the process writing it and whether it is alive (``run.lease_seconds``).

    Reading never creates a store: a path where none is raises ``ConfigError``.
    """
    return run_listing.leaderboard(ARCHIVE, store, _headlines_of, benchmark, lease_seconds)


def _headlines_of(benchmark: str) -> tuple[HeadlineMetric, ...]:
    """A benchmark's declared headlines; none for a benchmark this installation does not know."""
    from culturebias.domain.errors import CultureBiasError

    try:
        return registry().benchmark(benchmark).headline_metrics()
    except CultureBiasError:
        return ()


def sweep(
    plan: str | Path | Mapping[str, Any], *, out: str | Path, resume: bool = False, progress_bar: bool = False  # Any: a settings section as a dict (TOML/JSON values)
) -> Any:  # Any: a SweepResult (bootstrap.sweep, imported when called)
    """Run models × benchmarks into one store under ``out`` (``out/<model>/<benchmark>/``), then compare.

    ``plan`` is a sweep TOML file or its dict (docs/comparing.md, "Sweeps"). A failing pair is recorded
    with its error in ``out/sweep.json`` while the others run; ``resume=True`` skips finished
    pairs and continues unfinished ones. Returns the typed ``SweepResult`` (``.ok`` when every pair finished).
    """
    from culturebias.adapters.files.output_folder import LocalOutputFolders
    from culturebias.application.sweep import STORE_FILE, load_plan, run_sweep
    from culturebias.bootstrap.sweep_pairs import pair_executor, pair_settings

    with embedded(progress_bar):  # the CLI's sweep (bars asked for) keeps its terminal output
        loaded = load_plan(plan)
        names = benchmark_names(loaded.benchmarks)
        out_dir = Path(out).expanduser()
        folders = LocalOutputFolders()
        folders.check(out_dir)
        store = out_dir / STORE_FILE
        per_pair = pair_settings(loaded, names, store, make_settings)
        executor = pair_executor(loaded, per_pair, store, evaluate=run_evaluation, archive=ARCHIVE, progress_bar=progress_bar)

        def compare_(runs: list[str], folder: Path, runs_store: Path) -> Path:
            written = compare_runs(runs, out=folder, store=runs_store).comparison_path
            assert written is not None, "a comparison given a folder writes comparison.json there"
            return written

        return run_sweep(
            loaded, names, out_dir, resume=resume, executor=executor, folders=folders, archive=ARCHIVE, compare=compare_
        )


def build_libra(corpus: str | Path, seeds: str | Path, out: str | Path, **options: Any):  # Any: adapters.libra_build.wiring.build_libra's keyword options
    """Build LIBRA triplets from a local corpus (``culturebias build libra``); see ``adapters.libra_build.wiring.build_libra``
    for the options (steps, resume, text_field, settings, expander, clusterer). Returns the typed ``BuildReport``."""
    from culturebias.bootstrap.libra_build_wiring import build_libra as run_build

    with embedded(False):
        return run_build(corpus, seeds, out, **options)
