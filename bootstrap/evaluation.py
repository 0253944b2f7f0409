"""Running evaluations: one benchmark's run (its container, data read up front, plan, budget), several on one
model, and a run's plan without running it. The API facade (``bootstrap.api``) and the CLI call these."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from dependency_injector import providers

from culturebias.adapters.files.output_folder import check_output_folder, check_writable_store, make_output_folder
from culturebias.application.run_benchmark import RunRequest, RunResult, run_benchmark
from culturebias.bootstrap.archive import store_location
from culturebias.bootstrap.container import SharedModel, build_source, check_model_locations, make_container, make_context_factory
from culturebias.bootstrap.registry import registry
from culturebias.bootstrap.settings import Settings, StoreSettings
from culturebias.domain.errors import ConfigError
from culturebias.domain.fingerprint import fingerprint
from culturebias.domain.runs import RunManifest
from culturebias.domain.stratified import SampleOptions
from culturebias.logs import get_logger
from culturebias.ports.datasets import DatasetSource
from culturebias.ports.model_backend import Tokenizing
from culturebias.ports.progress import ProgressEvent
from culturebias.ports.results import ResultStore

log = get_logger("culturebias.plan")

if TYPE_CHECKING:
    from culturebias.domain.run_plan import RunPlan

DatasetT = TypeVar("DatasetT")


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
    made_folder = out_dir is not None and not out_dir.exists()
    if out_dir is not None:
        make_output_folder(out_dir)
        from culturebias.application.out_folder import FolderLock

        free = FolderLock(out_dir)  # a folder another run holds is refused before a plan is made and printed
        free.acquire()
        free.release()
    # After the folder is made (a folder that cannot be one fails first), before anything is written in it.
    try:
        wrap, announce = planned_run(benchmark, settings, container, descriptor.service_class()(options), source, resume, progress_bar)
    except ConfigError:
        if made_folder and out_dir is not None and not any(out_dir.iterdir()):
            out_dir.rmdir()  # refused before anything was written: no folder left either
        raise
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
    options = settings.protocol_options(benchmark)
    sampled = isinstance(options, SampleOptions) and options.sample is not None
    mode = settings.run.plan
    local = isinstance(container.model_backend(), Tokenizing) if mode == "auto" else False
    calibrate = mode == "always" or local

    def show(plan: "RunPlan", manifest: RunManifest) -> "RunPlan":
        if manifest.progress:
            plan = with_stored(plan, {stage: p.done for stage, p in manifest.progress.items()})
        # Shown once: as text for a person at the CLI (then logged at debug), else as the logged event.
        shown = printed and settings.run.log_format != "json"
        (log.debug if shown else log.info)(
            "plan", requests=plan.requests, stored_requests=plan.stored_requests, tokens=plan.tokens,
            distinct_tokens=plan.distinct_tokens, eta_seconds=plan.eta_seconds, cost=plan.cost,
        )
        if shown:
            print(plan.text(), file=sys.stderr, flush=True)
        return plan

    wrap = budget_wrapper(settings, container)
    if budget.set:
        made = make_plan(benchmark, settings, container, service, source, calibrate=calibrate, shown=printed)
        if not resume:
            refuse_over_budget(made, budget)
        return wrap, lambda manifest: show(made, manifest)
    if sampled and mode != "never":  # the sample is drawn before anything is written: a size the data cannot give is refused
        try:
            early = make_plan(benchmark, settings, container, service, source, calibrate=calibrate)
        except ConfigError:
            raise
        except Exception as why:  # the plan informs; the run meets (and records) what stopped it
            log.warning("no plan for this run", reason=f"{type(why).__name__}: {why}")
            return wrap, None
        return wrap, lambda manifest: show(early, manifest)
    if mode == "never":
        return wrap, None

    def announce(manifest: RunManifest) -> "RunPlan | None":
        try:
            made = make_plan(benchmark, settings, container, service, source, calibrate=calibrate, shown=printed)
        except Exception as why:  # the plan informs; the run meets (and records) what stopped it
            log.warning("no plan for this run", reason=f"{type(why).__name__}: {why}")
            return None
        return show(made, manifest)

    return wrap, announce


def planning_parts(
    benchmark: str, settings: Settings, progress_bar: bool = False
) -> tuple[Settings, Any, Any, Any]:  # Any: the container, the benchmark's own service and source
    """What a plan is made from, with nothing written: the benchmark's settings (an in-memory store), its
    container (progress shown as ``run.progress`` says with ``progress_bar``, else none), its service and its
    read data source; the model's location checked."""
    from culturebias.adapters.progress.reporters import NullProgress

    descriptor = registry().benchmark(benchmark)
    settings = settings.for_benchmark(benchmark)
    options = settings.protocol_options(benchmark)
    settings = settings.model_copy(update={"store": StoreSettings(backend="memory")})
    container = make_container(benchmark, settings, None)
    if not progress_bar:
        container.progress.override(providers.Object(NullProgress()))
    source = container.source()
    if not isinstance(source, _ReadSource):
        source = _ReadSource(source)
    check_model_locations(settings, container.cache_dir())
    return settings, container, descriptor.service_class()(options), source


def plan_evaluation(benchmark: str, settings: Settings, *, calibrate: bool = True, progress_bar: bool = False) -> "RunPlan":
    """A run's plan without running it: nothing is written, the model is asked only the calibration.
    ``progress_bar``: its work shown as ``run.progress`` says (the CLI); otherwise nothing is shown."""
    from culturebias.bootstrap.planning import make_plan

    settings, container, service, source = planning_parts(benchmark, settings, progress_bar)
    return make_plan(benchmark, settings, container, service, source, calibrate=calibrate, shown=progress_bar)


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
