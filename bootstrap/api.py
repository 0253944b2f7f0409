"""The public Python API: what ``culturebias.evaluate`` and friends are.

Embedding hosts call these; the CLI is a thin layer over the same functions.
Nothing here calls ``sys.exit``, configures the host's logging (unless
``configure_logging=True``) or draws on the terminal (unless ``progress_bar=True``):
log events are ``logging`` records under ``culturebias`` (``culturebias.logs``), and the
bars and warnings of the libraries a call uses go there too (``bootstrap/quiet.py``);
errors are the typed ones of ``culturebias.errors``. Every evaluation builds its
own container, so two evaluations in one process share no ports, models or stores;
``evaluate_many`` / ``run_evaluations`` share one model across their benchmarks on purpose.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeGuard, TypeVar

from dependency_injector import providers
from pydantic import BaseModel, ValidationError

from culturebias.adapters.files.output_folder import check_output_folder, check_writable_store, make_output_folder
from culturebias.application.run_benchmark import RunRequest, RunResult, run_benchmark
from culturebias.application.run_lease import DEFAULT_LEASE_SECONDS, LeaseRule, mark_left_run_interrupted
from culturebias.bootstrap.container import (
    SharedModel,
    build_comparison_report,
    build_source,
    build_store,
    check_model_locations,
    make_container,
    make_context_factory,
)
from culturebias.bootstrap.registry import BackendDescriptor, BenchmarkDescriptor, StoreDescriptor, registry
from culturebias.bootstrap.settings import (
    DataSettings,
    ModelSettings,
    RunSettings,
    Settings,
    StoreSettings,
    explain_validation_error,
    load_settings,
)
from culturebias.domain.audit import ItemRecord
from culturebias.domain.errors import ConfigError, DataError
from culturebias.domain.comparison.envelope import Comparison
from culturebias.domain.fingerprint import fingerprint
from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.leaderboard import LeaderboardRow
from culturebias.domain.runs import RunManifest
from culturebias.domain.summary import RunSummary, check_schema_version, parse_summary
from culturebias.ports.progress import ProgressEvent
from culturebias.ports.datasets import DatasetSource
from culturebias.ports.results import ResultStore
from culturebias.logs import get_logger

log = get_logger("culturebias.plan")

if TYPE_CHECKING:
    from culturebias.application.compare import ComparisonResult
    from culturebias.domain.run_plan import RunPlan

SectionInput = BaseModel | Mapping[str, Any] | str | Path | None  # Any: a section given as a dict (TOML/JSON values)
DatasetT = TypeVar("DatasetT")


def _section(value: SectionInput, shorthand: str | None = None) -> dict[str, Any] | None:  # Any: TOML/JSON values
    """A settings section given as a model, a dict, or a plain string (that section's ``path``)."""
    if value is None:
        return None
    if isinstance(value, (str, Path)) and shorthand:
        return {shorthand: str(value)}
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_unset=False)
    if isinstance(value, Mapping):
        return dict(value)
    raise ConfigError(f"expected a settings object, a dict or a path, got {type(value).__name__}")


def make_settings(
    *,
    settings: Settings | None = None,
    model: ModelSettings | Mapping[str, Any] | str | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    data: DataSettings | Mapping[str, Any] | str | Path | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    options: BaseModel | Mapping[str, Any] | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    store: StoreSettings | Mapping[str, Any] | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    judge: Mapping[str, Any] | BaseModel | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    run: RunSettings | Mapping[str, Any] | None = None,  # Any: a settings section as a dict (TOML/JSON values)
    config_file: str | Path | None = None,
) -> Settings:
    """Settings from keyword sections layered over ``settings`` (or over defaults, a TOML file and the environment)."""
    base = settings if settings is not None else load_settings(config_file)
    values = base.model_dump()
    values["model"] = base.model.model_dump()
    for name, given in (
        ("model", _section(model, "path")),
        ("data", _section(data, "path")),
        ("store", _section(store, "path")),
        ("judge", _section(judge, "path")),
        ("run", _section(run)),
        ("protocol", _section(options)),
    ):
        if given is not None:
            values[name] = {**values[name], **given} if name != "protocol" else given
    try:
        return Settings.model_validate(values)
    except ValidationError as error:
        raise ConfigError(explain_validation_error(error)) from None


def run_evaluation(
    benchmark: str,
    settings: Settings,
    *,
    out: str | Path | None = None,
    resume: bool = False,
    on_progress: Callable[[ProgressEvent], None] | None = None,
    progress_bar: bool = False,
    store: ResultStore | None = None,
    shared_model: SharedModel | None = None,
    source: DatasetSource[Any] | None = None,  # Any: the benchmark's own dataset type
) -> RunResult:
    """One evaluation with everything it wrote: the typed summary, summary.json and the report files.

    ``progress_bar``: bars as ``run.progress`` says (the CLI); otherwise none. ``shared_model``
    lets several evaluations use one loaded model, and ``source`` replaces the benchmark's
    dataset source (``run_evaluations`` reads every benchmark's data before the first runs).
    """
    descriptor = registry().benchmark(benchmark)
    settings = settings.for_benchmark(benchmark)  # a flat protocol section and one data.path, as recorded
    options = settings.protocol_options(benchmark)  # validated before anything is written
    out_dir = Path(out).expanduser() if out is not None else None
    if out_dir is not None:
        check_output_folder(out_dir)
    if out_dir is None and store is None and not settings.store.path and not settings.store.dsn:
        settings = settings.model_copy(update={"store": StoreSettings(backend="memory")})
    if store is None:
        check_writable_store(store_location(settings, out_dir), settings.store.backend)
    container = make_container(benchmark, settings, out_dir)
    if shared_model is not None:
        shared_model.attach(container)
    if store is not None:
        container.store.override(providers.Object(store))
    if source is not None:
        container.source.override(providers.Object(source))
    if on_progress is not None:
        from culturebias.adapters.progress.reporters import CallbackProgress

        container.progress.override(providers.Object(CallbackProgress(on_progress)))
    elif not progress_bar:
        from culturebias.adapters.progress.reporters import NullProgress

        container.progress.override(providers.Object(NullProgress()))
    # Before anything is written (output folder, store, manifest): the data read, the model's location checked.
    source = container.source()
    if not isinstance(source, _ReadSource):
        source = _ReadSource(source)
    check_model_locations(settings, container.cache_dir())
    if settings.run.executor == "ray":
        container.model_backend()  # cluster reached, resources checked, every replica's model loaded: before anything is stored
    if out_dir is not None:
        make_output_folder(out_dir)
        from culturebias.application.out_folder import FolderLock

        free = FolderLock(out_dir)  # a folder another run holds is refused before a plan is made and printed
        free.acquire()
        free.release()
    # After the folder is made (a folder that cannot be one fails first), before anything is written in it.
    wrap, announce = planned_run(benchmark, settings, container, descriptor.service_class()(options), source, resume, progress_bar)
    request = RunRequest(
        benchmark=benchmark,
        service=descriptor.service_class()(options),
        summary_model=descriptor.summary_model(),
        source=source,
        store=container.store(),
        report=container.report() if out_dir is not None else None,
        out_dir=out_dir,
        config=settings.redacted(),
        config_fingerprint=fingerprint(identity := settings.resume_identity(container.model_weights())),
        resume=resume,
        identity=identity,
        repeats=settings.run.repeats,
        headlines=descriptor.headline_metrics(),
        lease_seconds=settings.run.lease_seconds,
        announce=announce,
    )
    try:
        return run_benchmark(request, make_context_factory(container, wrap=wrap))
    finally:
        if store is None:
            container.store().close()


def planned_run(
    benchmark: str, settings: Settings, container: Any, service: Any, source: Any, resume: bool, printed: bool  # Any: JSON-like settings sections and the benchmark's own service, source and container
) -> tuple[Callable[[Any], Any] | None, Callable[[RunManifest], "RunPlan | None"] | None]:  # Any: JSON-like settings sections and the benchmark's own service, source and container
    """The port wrapper that stops the run at its budget (None without one), and the run's announcement: its
    plan, made once the run is recorded, printed on stderr for the CLI, logged always, written to plan.json.

    ``run.plan=count`` (the default) counts on placeholder ports, calibrates nothing and asks the model
    nothing; ``auto`` also calibrates an ETA on a local model (one with a tokenizer), ``always`` on any;
    ``never`` makes none. A run with a budget makes its plan before anything is written, to refuse a run above
    it (a resumed run is not refused on its whole plan: its budget counts what it asks). A plan that cannot be
    made is logged and the run goes on, unless a budget needs it. A resumed run's plan says what is stored.
    """
    from culturebias.bootstrap.planning import budget_of, budget_wrapper, make_plan
    from culturebias.domain.run_plan import refuse_over_budget, with_stored

    budget = budget_of(settings)
    mode = settings.run.plan
    local = callable(getattr(container.model_backend(), "tokenizer", None)) if mode == "auto" else False
    calibrate = mode == "always" or local

    def show(plan: "RunPlan", manifest: RunManifest) -> "RunPlan":
        if manifest.progress:
            plan = with_stored(plan, {stage: p.done for stage, p in manifest.progress.items()})
        log.info(
            "plan", requests=plan.requests, stored_requests=plan.stored_requests, tokens=plan.tokens,
            distinct_tokens=plan.distinct_tokens, eta_seconds=plan.eta_seconds, cost=plan.cost,
        )
        if printed:
            print(plan.text(), file=sys.stderr, flush=True)
        return plan

    wrap = budget_wrapper(settings, container)
    if budget.set:
        made = make_plan(benchmark, settings, container, service, source, calibrate=calibrate)
        if not resume:
            refuse_over_budget(made, budget)
        return wrap, lambda manifest: show(made, manifest)
    if mode == "never":
        return wrap, None

    def announce(manifest: RunManifest) -> "RunPlan | None":
        try:
            made = make_plan(benchmark, settings, container, service, source, calibrate=calibrate)
        except Exception as why:  # the plan informs; the run meets (and records) what stopped it
            log.warning("no plan for this run", reason=f"{type(why).__name__}: {why}")
            return None
        return show(made, manifest)

    return wrap, announce


def plan_evaluation(benchmark: str, settings: Settings, *, calibrate: bool = True) -> "RunPlan":
    """A run's plan without running it: nothing is written, the model is asked only the calibration."""
    from culturebias.adapters.progress.reporters import NullProgress
    from culturebias.bootstrap.planning import make_plan

    descriptor = registry().benchmark(benchmark)
    settings = settings.for_benchmark(benchmark)
    options = settings.protocol_options(benchmark)
    settings = settings.model_copy(update={"store": StoreSettings(backend="memory")})
    container = make_container(benchmark, settings, None)
    container.progress.override(providers.Object(NullProgress()))
    source = container.source()
    if not isinstance(source, _ReadSource):
        source = _ReadSource(source)
    check_model_locations(settings, container.cache_dir())
    return make_plan(benchmark, settings, container, descriptor.service_class()(options), source, calibrate=calibrate)


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
    with _embedded(False):
        resolved, _ = _call_settings(settings, model, data, with_sample(options, sample), None, None, run, False)
        return plan_evaluation(benchmark, resolved, calibrate=calibrate)


def benchmark_names(benchmarks: str | Sequence[str]) -> list[str]:
    """``"kobbq,cbbq"`` or a list of names: registered, without repeats, in the order given."""
    given = benchmarks.split(",") if isinstance(benchmarks, str) else list(benchmarks)
    names = list(dict.fromkeys(name.strip() for name in given if name.strip()))
    if not names:
        raise ConfigError("no benchmark named (e.g. kobbq or kobbq,cbbq,libra)")
    for name in names:
        registry().benchmark(name)  # UnknownNameError with a did-you-mean
    return names


def run_evaluations(
    benchmarks: str | Sequence[str],
    settings: Settings,
    *,
    out: str | Path | None = None,
    resume: bool = False,
    on_progress: Callable[[ProgressEvent], None] | None = None,
    progress_bar: bool = False,
    store: ResultStore | None = None,
) -> dict[str, RunResult]:
    """Several benchmarks in one call with one model load; each writes to ``out/<benchmark>/``.

    ``protocol.<benchmark>.<key>`` and ``data.<benchmark>.path`` set one benchmark's options
    and data; a plain ``protocol.<key>`` applies to every benchmark that has the key
    (``Settings.for_benchmark``). Every benchmark's options, data and output folder are
    checked before the first one runs. A benchmark that fails stops the call; those
    before it are finished and written.
    """
    names = benchmark_names(benchmarks)
    per_benchmark = {name: settings.for_benchmark(name, names) for name in names}
    out_dir = Path(out).expanduser() if out is not None else None
    sources: dict[str, _ReadSource[Any]] = {}  # Any: each benchmark's own dataset type
    for name in names:
        if out_dir is not None:
            check_output_folder(out_dir / name)
        # Missing or malformed data of any benchmark fails before a model loads or a run starts.
        sources[name] = _ReadSource(build_source(name, per_benchmark[name]))
    shared = SharedModel()
    results: dict[str, RunResult] = {}
    for name in names:
        results[name] = run_evaluation(
            name,
            per_benchmark[name],
            out=out_dir / name if out_dir is not None else None,
            resume=resume,
            on_progress=on_progress,
            progress_bar=progress_bar,
            store=store,
            shared_model=shared,
            source=sources.pop(name),
        )
    return results


class _ReadSource(Generic[DatasetT]):
    """A dataset source read once, up front; the run then uses what was read."""

    def __init__(self, source: DatasetSource[DatasetT]):
        self._source = source
        self._fingerprint = source.fingerprint()
        self._dataset = source.load()

    def describe(self) -> str:
        return self._source.describe()

    def fingerprint(self) -> str:
        return self._fingerprint

    def load(self) -> DatasetT:
        return self._dataset


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
    with _embedded(configure_logging):
        options = with_sample(options, sample)
        resolved, store_object = _call_settings(settings, model, data, options, store, judge, run, configure_logging)
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
    with _embedded(configure_logging):
        resolved, store_object = _call_settings(
            settings, model, data, sections if options is not None else None, store, judge, run, configure_logging
        )
        results = run_evaluations(names, resolved, out=out, resume=resume, on_progress=on_progress, store=store_object)
    return {name: result.summary for name, result in results.items()}


def with_sample(options: BaseModel | Mapping[str, Any] | None, sample: int | None) -> BaseModel | Mapping[str, Any] | None:  # Any: JSON-like settings sections and the benchmark's own service, source and container
    """``options`` with ``sample`` (the API's ``sample=N``) as ``protocol.sample``; unchanged without one."""
    if sample is None:
        return options
    given = options.model_dump(exclude_unset=True) if isinstance(options, BaseModel) else dict(options or {})
    return {**given, "sample": sample}


def _embedded(configured: bool) -> contextlib.AbstractContextManager[None]:
    """Third-party bars and warnings of the call into the ``culturebias`` logger, unless the host asked for our logging."""
    from culturebias.bootstrap.quiet import quiet_call

    return contextlib.nullcontext() if configured else quiet_call()


def _call_settings(
    settings: Settings | None,
    model: Any,  # Any: a section as evaluate() takes it
    data: Any,  # Any: a section as evaluate() takes it
    options: Any,  # Any: a section as evaluate() takes it
    store: Any,  # Any: a section or a store, as evaluate() takes it
    judge: Any,  # Any: a section as evaluate() takes it
    run: Any,  # Any: a section as evaluate() takes it
    configure_logging: bool,
) -> tuple[Settings, ResultStore | None]:
    """The settings of one API call, and the store object the host passed (if it passed one)."""
    store_object = store if _is_store(store) else None
    resolved = make_settings(
        settings=settings,
        model=model,
        data=data,
        options=options,
        store=None if store_object is not None else store,
        judge=judge,
        run=run,
    )
    if configure_logging:
        from culturebias.bootstrap.logging import configure_logging as configure

        configure(resolved.run.log_format, resolved.run.log_level)
    return resolved, store_object


def _is_store(value: object) -> TypeGuard[ResultStore]:
    return value is not None and not isinstance(value, (BaseModel, Mapping, str, Path)) and hasattr(value, "save_results")


def load_summary(path: str | Path) -> RunSummary:
    """A summary.json (or a run folder holding one) as its benchmark's typed summary."""
    file = Path(path).expanduser()
    if file.is_dir():
        file = file / "summary.json"
    if not file.is_file():
        raise DataError("no such summary file", file=str(file))
    try:
        payload = json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise DataError(f"not JSON: {error}", file=str(file)) from None
    if not isinstance(payload, dict):
        raise DataError("a summary is a JSON object", file=str(file))
    return summary_from_dict(payload, where=str(file))


def summary_from_dict(payload: Mapping[str, Any], where: str = "summary") -> RunSummary:  # Any: a settings section as a dict (TOML/JSON values)
    check_schema_version(payload.get("schema_version"), where)
    benchmark = payload.get("benchmark")
    if not isinstance(benchmark, str):
        raise DataError("no benchmark named", file=where, field="benchmark")
    model = registry().benchmark(benchmark).summary_model()
    return parse_summary(model, dict(payload), where)


def open_store(
    store: StoreSettings | Mapping[str, Any] | str | Path | ResultStore, *, must_exist: bool = False  # Any: a settings section as a dict (TOML/JSON values)
) -> ResultStore:
    """A result store from settings, a dict, a path (a .sqlite file, a JSONL folder or a run folder),
    a ``postgresql://`` DSN (the password from $PGPASSWORD or ~/.pgpass) or as it is.

    ``must_exist``: a store file or folder that is not there is a ``ConfigError``, not a new empty store.
    """
    if _is_store(store):
        return store
    if isinstance(store, str) and store.startswith(("postgresql://", "postgres://")):
        return build_store(Settings(store=StoreSettings(backend="postgres", dsn=store)), None)
    if isinstance(store, (str, Path)):
        return _store_at(Path(store).expanduser(), must_exist)
    settings = StoreSettings.model_validate(_section(store))  # type: ignore[arg-type]  # a ResultStore was returned above
    return open_configured_store(Settings(store=settings), None) if must_exist else build_store(Settings(store=settings), None)


def open_configured_store(settings: Settings, out: str | Path | None, *, must_exist: bool = True) -> ResultStore:
    """The store ``store.*`` configures for the output folder ``out``; with ``must_exist``, only if it is there."""
    descriptor = registry().store(settings.store.backend)
    out_dir = Path(out).expanduser() if out is not None else None
    location = store_location(settings, out_dir)
    if must_exist and location is not None and not location.exists():
        raise ConfigError(f"no result store at {location} (store.backend={descriptor.name}; check --out and store.path)")
    return build_store(settings, out_dir)


def store_location(settings: Settings, out_dir: Path | None) -> Path | None:
    """Where a file-based store lives (``store.path``, else its place in the output folder); None for others."""
    if settings.store.path:
        return Path(settings.store.path).expanduser()
    descriptor = registry().store(settings.store.backend)
    return Path(out_dir or ".") / descriptor.default_location if descriptor.default_location else None


def _store_at(path: Path, must_exist: bool = False) -> ResultStore:
    stores = registry()
    if path.is_file() or (path.suffix in (".sqlite", ".db") and not must_exist):
        return stores.store("sqlite").open(path)
    if (path / "runs.jsonl").is_file():
        return stores.store("jsonl").open(path)
    for descriptor in (stores.store("sqlite"), stores.store("jsonl")):
        candidate = path / descriptor.default_location
        if candidate.exists():
            return descriptor.open(candidate)
    raise ConfigError(f"no result store at {path} (expected a .sqlite file, a JSONL store folder or a run folder)")


class _Archive:
    """``ports.run_archive.RunArchive`` of the facade: what ``open_store``, ``load_summary`` and ``summary_from_dict`` do."""

    def open_store(self, store: Any, *, must_exist: bool = False) -> ResultStore:  # Any: a settings section as a dict (TOML/JSON values)
        return open_store(store, must_exist=must_exist)

    def load_summary(self, path: str | Path) -> RunSummary:
        return load_summary(path)

    def summary_from_dict(self, payload: Mapping[str, Any], where: str = "summary") -> RunSummary:  # Any: a settings section as a dict (TOML/JSON values)
        return summary_from_dict(payload, where)


ARCHIVE = _Archive()


def list_runs(store: StoreSettings | Mapping[str, Any] | str | Path | ResultStore, benchmark: str | None = None) -> list[RunManifest]:  # Any: a settings section as a dict (TOML/JSON values)
    """Every run a store holds (oldest first), with status and, for a failed run, why it failed.

    Reading never creates a store: a path where none is raises ``ConfigError``.
    """
    opened = open_store(store, must_exist=True)
    try:
        return opened.find_runs(benchmark)
    finally:
        if opened is not store:
            opened.close()


def mark_interrupted(
    store: StoreSettings | Mapping[str, Any] | str | Path | ResultStore, run_id: str, lease_seconds: float = DEFAULT_LEASE_SECONDS  # Any: a settings section as a dict (TOML/JSON values)
) -> RunManifest:
    """Mark a run that a process which is gone left ``running`` as ``interrupted``, so it shows as what it is;
    ``--resume`` continues it either way. Refused (``RunInUseError``) while a live process writes it."""
    opened = open_store(store, must_exist=True)
    try:
        return mark_left_run_interrupted(opened, run_id, LeaseRule(stale_seconds=lease_seconds))
    finally:
        if opened is not store:
            opened.close()


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
    with _embedded(False):
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
    from culturebias.bootstrap.verdicts import stored_verdicts

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
    ``model``, ``model_fingerprint``), metadata as ``meta.<field>`` columns, each column of the one type
    ``culturebias.domain.export_schema`` declares (lists as lists; docs/EXPORT_SCHEMA.md). ``where``/``limit``
    apply to each run. Returns the rows written."""
    from culturebias.adapters.files.table_files import ItemTables
    from culturebias.application.samples import export_samples as export

    return export(
        run, path, format, where=where, limit=limit, store=store, archive=ARCHIVE, tables=ItemTables(), meta_columns=export_meta_of
    )


def export_meta_of(benchmark: str) -> dict[str, str]:
    """A benchmark's declared export metadata columns; a run of a benchmark not installed here: the common ones."""
    from culturebias.domain.export_schema import COMMON_META

    table = registry().benchmarks
    return registry().benchmark(benchmark).export_meta_columns() if benchmark in table.names() else dict(COMMON_META)


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
    from culturebias.domain.errors import CultureBiasError
    from culturebias.domain.leaderboard import leaderboard_row

    rule = LeaseRule(stale_seconds=lease_seconds)
    opened = open_store(store, must_exist=True)
    try:
        rows = []
        headlines: dict[str, tuple[Any, ...]] = {}  # per benchmark, looked up once for all its runs
        for manifest in opened.find_runs(benchmark):
            if manifest.benchmark not in headlines:
                headlines[manifest.benchmark] = _headlines_of(manifest.benchmark)
            payload = opened.load_summary(manifest.run_id) if manifest.status == "finished" else None
            try:
                summary = summary_from_dict(payload, where=f"run {manifest.run_id}") if payload is not None else None
            except CultureBiasError:  # a summary this version cannot read: listed without its numbers
                summary = None
            rows.append(leaderboard_row(manifest, summary, headlines[manifest.benchmark], rule.is_live(manifest.lease)))
        return rows
    finally:
        if opened is not store:
            opened.close()


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

    with _embedded(progress_bar):  # the CLI's sweep (bars asked for) keeps its terminal output
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


def build_libra(corpus: str | Path, seeds: str | Path, out: str | Path, **options: Any):  # Any: libra_build_wiring.build_libra's keyword options
    """Build LIBRA triplets from a local corpus (``culturebias build libra``); see ``bootstrap.libra_build_wiring.build_libra``
    for the options (steps, resume, text_field, settings, expander, clusterer). Returns the typed ``BuildReport``."""
    from culturebias.bootstrap.libra_build_wiring import build_libra as run_build

    with _embedded(False):
        return run_build(corpus, seeds, out, **options)
