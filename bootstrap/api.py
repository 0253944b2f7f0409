"""The public Python API: what ``culturebias.evaluate`` and friends are.

Embedding hosts call these; the CLI is a thin layer over the same functions.
Nothing here calls ``sys.exit``, configures the host's logging (unless
``configure_logging=True``) or draws on the terminal (unless ``progress_bar=True``);
errors are the typed ones of ``culturebias.errors``. Every evaluation builds its
own container, so two evaluations in one process share no ports, models or stores.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from dependency_injector import providers
from pydantic import BaseModel, ValidationError

from culturebias.application.run_benchmark import RunRequest, RunResult, run_benchmark
from culturebias.bootstrap.container import build_store, make_container, make_context_factory
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
from culturebias.domain.errors import ConfigError, DataError
from culturebias.domain.fingerprint import fingerprint
from culturebias.domain.runs import RunManifest
from culturebias.domain.summary import RunSummary, check_schema_version, parse_summary
from culturebias.ports.progress import ProgressEvent
from culturebias.ports.results import ResultStore

SectionInput = BaseModel | Mapping[str, Any] | None


def _section(value: SectionInput, shorthand: str | None = None) -> dict[str, Any] | None:
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
    model: ModelSettings | Mapping[str, Any] | str | None = None,
    data: DataSettings | Mapping[str, Any] | str | Path | None = None,
    options: BaseModel | Mapping[str, Any] | None = None,
    store: StoreSettings | Mapping[str, Any] | None = None,
    judge: Mapping[str, Any] | BaseModel | None = None,
    run: RunSettings | Mapping[str, Any] | None = None,
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
) -> RunResult:
    """One evaluation with everything it wrote: the typed summary, summary.json and the report files."""
    descriptor = registry().benchmark(benchmark)
    options = settings.protocol_options(benchmark)  # validated before anything is written
    out_dir = Path(out).expanduser() if out is not None else None
    if out_dir is None and store is None and not settings.store.path:
        settings = settings.model_copy(update={"store": StoreSettings(backend="memory")})
    container = make_container(benchmark, settings, out_dir)
    if store is not None:
        container.store.override(providers.Object(store))
    if on_progress is not None:
        from culturebias.adapters.progress import CallbackProgress

        container.progress.override(providers.Object(CallbackProgress(on_progress)))
    elif not progress_bar:
        from culturebias.adapters.progress import NullProgress

        container.progress.override(providers.Object(NullProgress()))
    source = container.source()
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    request = RunRequest(
        benchmark=benchmark,
        service=descriptor.service_class()(options),
        summary_model=descriptor.summary_model(),
        source=source,
        store=container.store(),
        report=container.report() if out_dir is not None else None,
        out_dir=out_dir,
        config=settings.redacted(),
        config_fingerprint=fingerprint(settings.resume_identity()),
        resume=resume,
    )
    try:
        return run_benchmark(request, make_context_factory(container))
    finally:
        if store is None:
            container.store().close()


def evaluate(
    benchmark: str,
    *,
    model: ModelSettings | Mapping[str, Any] | str | None = None,
    data: DataSettings | Mapping[str, Any] | str | Path | None = None,
    options: BaseModel | Mapping[str, Any] | None = None,
    store: StoreSettings | Mapping[str, Any] | ResultStore | None = None,
    out: str | Path | None = None,
    resume: bool = False,
    on_progress: Callable[[ProgressEvent], None] | None = None,
    judge: Mapping[str, Any] | BaseModel | None = None,
    run: RunSettings | Mapping[str, Any] | None = None,
    settings: Settings | None = None,
    configure_logging: bool = False,
) -> RunSummary:
    """Run one benchmark and return its typed summary (``summary.run_id`` names the run).

    ``model``, ``data``, ``store``, ``judge`` and ``run`` are settings sections (a
    settings object, a dict of its keys, or for model/data a plain path);
    ``options`` are the benchmark's ``protocol.*`` options (its ``*Options`` object
    or a dict). With ``out`` the run also writes ``summary.json`` and the report
    there, and keeps its results in the configured store (``out/results.sqlite``
    by default); without it nothing is written and results stay in memory, unless
    ``store`` says otherwise. ``store`` may also be a ResultStore object the host owns.
    """
    store_object = store if _is_store(store) else None
    resolved = make_settings(
        settings=settings,
        model=model,
        data=data,
        options=options,
        store=None if store_object is not None else store,  # type: ignore[arg-type]
        judge=judge,
        run=run,
    )
    if configure_logging:
        from culturebias.bootstrap.logging import configure_logging as configure

        configure(resolved.run.log_format, resolved.run.log_level)
    result = run_evaluation(benchmark, resolved, out=out, resume=resume, on_progress=on_progress, store=store_object)
    return result.summary


def _is_store(value: Any) -> bool:
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


def summary_from_dict(payload: Mapping[str, Any], where: str = "summary") -> RunSummary:
    check_schema_version(payload.get("schema_version"), where)
    benchmark = payload.get("benchmark")
    if not isinstance(benchmark, str):
        raise DataError("no benchmark named", file=where, field="benchmark")
    model = registry().benchmark(benchmark).summary_model()
    return parse_summary(model, dict(payload), where)  # type: ignore[arg-type]


def open_store(store: StoreSettings | Mapping[str, Any] | str | Path | ResultStore) -> ResultStore:
    """A result store from settings, a dict, a path (a .sqlite file, a JSONL folder or a run folder) or as it is."""
    if _is_store(store):
        return store  # type: ignore[return-value]
    if isinstance(store, (str, Path)):
        return _store_at(Path(store).expanduser())
    settings = StoreSettings.model_validate(_section(store))  # type: ignore[arg-type]
    return build_store(Settings(store=settings), None)


def _store_at(path: Path) -> ResultStore:
    stores = registry()
    if path.is_file() or path.suffix in (".sqlite", ".db"):
        return stores.store("sqlite").open(path)
    if (path / "runs.jsonl").is_file():
        return stores.store("jsonl").open(path)
    for descriptor in (stores.store("sqlite"), stores.store("jsonl")):
        candidate = path / descriptor.default_location
        if candidate.exists():
            return descriptor.open(candidate)
    raise ConfigError(f"no result store at {path} (expected a .sqlite file, a JSONL store folder or a run folder)")


def list_runs(store: StoreSettings | Mapping[str, Any] | str | Path | ResultStore, benchmark: str | None = None) -> list[RunManifest]:
    """Every run a store holds (oldest first), with status and, for a failed run, why it failed."""
    opened = open_store(store)
    try:
        return opened.find_runs(benchmark)
    finally:
        if opened is not store:
            opened.close()


def benchmarks() -> list[BenchmarkDescriptor]:
    return [d for d in registry().benchmarks.all() if isinstance(d, BenchmarkDescriptor)]


def backends() -> list[BackendDescriptor]:
    return [d for d in registry().backends.all() if isinstance(d, BackendDescriptor)]


def stores() -> list[StoreDescriptor]:
    return [d for d in registry().stores.all() if isinstance(d, StoreDescriptor)]


def summary_schema(benchmark: str) -> dict[str, Any]:
    """The JSON Schema of a benchmark's summary.json."""
    return registry().benchmark(benchmark).summary_model().model_json_schema(mode="serialization")
