"""The one registry: every benchmark, model backend and result store, declared once.

Built-in pieces are declared below; other distributions add theirs through
Python entry points (groups ``culturebias.benchmarks``, ``culturebias.backends``,
``culturebias.stores``), each pointing at a descriptor object. Descriptors name
their parts by dotted path (``module:attribute``) or hold them directly, so
reading the registry (for ``culturebias list``, ``--help`` or settings
validation) imports nothing heavy. The CLI's choices, settings validation,
``culturebias list``, the contract-test parametrisation and the docs site's tables
all read it; ``tests/unit/test_registry.py`` checks that every descriptor is
complete.
"""

from __future__ import annotations

import importlib
import threading
from pathlib import Path
from dataclasses import dataclass, field
from importlib import metadata
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel

from culturebias.domain.model_options import ModelOptions
from culturebias.adapters.optional_modules import require_modules
from culturebias.application.benchmark import BenchmarkService
from culturebias.application.compare import CompareBody, Comparer
from culturebias.ports.model_backend import ModelBackend
from culturebias.ports.reporting import ReportWriter
from culturebias.domain.comparison.envelope import Comparison
from culturebias.domain.comparison.headline_body import HeadlineComparison, compare_headlines
from culturebias.domain.errors import PluginError, UnknownNameError
from culturebias.domain.export_schema import COMMON_META
from culturebias.domain.headlines import HeadlineMetric, headline_problems
from culturebias.domain.validity import ValidityRule
from culturebias.domain.presets import Preset
from culturebias.domain.stratified import Strata
from culturebias.domain.summary import RunSummary
from culturebias.ports.results import ResultStore

if TYPE_CHECKING:  # the paired test's types import scipy: not at registry import
    from culturebias.domain.policy.paired import UnitValuesOf

# ``sections(comparison, out_dir) -> (Markdown sections, figures written)`` of comparison.md.
Sections = Callable[[Any, Path], tuple[list[str], list[Path]]]  # Any: the benchmark's own Comparison type

T = TypeVar("T")

# ``factory(options, cache_dir)``: ``options`` is an instance of the backend's own options model.
BackendFactory = Callable[[ModelOptions, Path], ModelBackend]

# What a model backend can do; protocols check the capability they need before a run.
Capability = Literal["loglikelihood", "pseudo_loglikelihood", "generate", "chat_template"]
CAPABILITIES: tuple[Capability, ...] = ("loglikelihood", "pseudo_loglikelihood", "generate", "chat_template")


def import_object(dotted: str) -> Any:  # Any: whatever the dotted path names
    """``package.module:attribute`` → the attribute (imports the module)."""
    module_name, _, attribute = dotted.partition(":")
    if not attribute:
        raise PluginError(f"{dotted!r} is not a 'module:attribute' path")
    try:
        target: Any = importlib.import_module(module_name)  # Any: a module, then its attributes
    except ImportError as error:
        raise PluginError(f"cannot import {module_name!r} (for {dotted!r}): {error}") from error
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise PluginError(f"{module_name!r} has no attribute {attribute!r}") from None
    return target


def resolve(ref: str | T) -> T:
    """A descriptor part: a dotted path is imported, an object is taken as it is."""
    return import_object(ref) if isinstance(ref, str) else ref


@dataclass(frozen=True)
class BenchmarkDescriptor:
    """One benchmark protocol, whole: everything benchmark-specific is a field here or reached through one.

    Parts are named by dotted path (``module:attribute``, imported on first use) or held directly.
    ``check_benchmark`` (run for every plugin on registration and for the built-ins by a test)
    refuses a descriptor that lacks a piece or declares a headline its summary cannot hold.
    """

    name: str
    title: str
    culture: str
    language: str
    # The protocol service class: ``Service(options)`` with ``preflight(ctx) -> plan``
    # and ``run(ctx, dataset, plan) -> ProtocolOutcome``.
    service: str | type[BenchmarkService[Any, Any]]  # Any: its own dataset and plan types
    # The pydantic model of ``protocol.*`` options.
    options: str | type[BaseModel]
    # ``DatasetSource`` class, constructed as ``Source(path: str | None)``.
    dataset_source: str | type
    # The benchmark's ``RunSummary`` subclass (the JSON Schema of summary.json).
    summary: str | type[RunSummary]
    # ``ReportWriter`` class, constructed without arguments (report.md and its figures; report.html wraps it).
    report: str | type[ReportWriter[Any]]  # Any: the benchmark's own summary type
    # The headline metrics (``domain.headlines.HeadlineMetric``): label, unit, range, direction, interval.
    headlines: str | tuple[HeadlineMetric, ...]
    data_licence: str
    bundled_data: bool  # runs with no data.path on data that ships with culturebias
    data_note: str = ""
    # ``compare(labels, summaries) -> (body, notes)`` and the typed ``Comparison`` it fills; without
    # them runs are compared on their headline metrics alone (``domain.comparison.headline_body``).
    compare: str | CompareBody | None = None
    comparison: str | type[Comparison[Any]] | None = None  # Any: its own body type
    # ``sections(comparison, out_dir) -> (Markdown sections, figures)`` of comparison.md, the benchmark's
    # cross-model views with their interval figures; without it, the headline table and bars.
    comparison_sections: str | Sections = "culturebias.adapters.reports.headline_sections:headline_sections"
    # ``expand(options_dict, templates, write) -> int`` for ``culturebias expand``: ``templates`` is
    # ``dataset_source.template_files(data.path)``, ``write`` takes the rows (JSON objects) and counts them.
    expander: str | Callable[..., int] | None = None
    # ``culturebias build <name>``: a module with ``add_parser(subparsers, name)`` and ``build_command(args)``
    # for a benchmark that builds its dataset from a local corpus.
    builder: str | None = None
    # Named presets for ``--preset`` (``domain.presets.Preset``) that are this benchmark's protocol.
    presets: str | tuple[Preset, ...] = ()
    # ``unit_values(summary, records, metric, breakdown) -> domain.policy.paired.UnitValues``: a headline's
    # per-unit data (resampling unit ids, what each carries, the statistic that recomputes the headline), for
    # the paired baseline test of ``culturebias check``; raises ``NoUnitValues`` saying why a run has none.
    # Without it, baseline criteria on this benchmark are inconclusive (or decided on the point estimates).
    # The metadata columns its item records carry in an export (``meta.<field>`` → Arrow type name, declared in the
    # benchmark's domain package); without it, its exports have the run and item columns and any metadata as text.
    export_meta: str | Mapping[str, str] | None = None
    unit_values: str | UnitValuesOf | None = None
    # ``domain.stratified.Strata``: the design cells ``--sample N`` stratifies by and the unit it draws whole
    # (the service draws with the same object, from the benchmark's domain package). Without it, a service
    # that samples draws a simple random sample of its units (``domain.stratified.draw_sample`` says so).
    strata: str | Strata[Any] | None = None
    # ``domain.validity.ValidityRule``s: the conditions under which its headlines mean what their sentences say
    # (PROTOCOLS §6); its service computes them into ``summary.validity``. Without them: no rule is declared.
    validity: str | tuple[ValidityRule, ...] = ()

    def validity_rules(self) -> tuple[ValidityRule, ...]:
        return tuple(resolve(self.validity)) if self.validity else ()

    def service_class(self) -> type[BenchmarkService[Any, Any]]:  # Any: each benchmark's own dataset and plan types
        return resolve(self.service)

    def options_model(self) -> type[BaseModel]:
        return resolve(self.options)

    def source_class(self) -> type:
        return resolve(self.dataset_source)

    def summary_model(self) -> type[RunSummary]:
        return resolve(self.summary)

    def report_writer(self) -> type[ReportWriter[Any]]:  # Any: the benchmark's own summary type
        return resolve(self.report)

    def headline_metrics(self) -> tuple[HeadlineMetric, ...]:
        return tuple(resolve(self.headlines))

    def comparer(self) -> Comparer:
        units = self.unit_values_function()
        if self.compare is None or self.comparison is None:  # both or neither (``benchmark_problems``)
            return Comparer(
                self.name, self.summary_model(), compare_headlines, HeadlineComparison, self.headline_metrics(), units
            )
        return Comparer(
            self.name, self.summary_model(), resolve(self.compare), resolve(self.comparison), self.headline_metrics(), units
        )

    def comparison_sections_function(self) -> Sections:
        return resolve(self.comparison_sections)

    def expand_function(self) -> Callable[..., int] | None:
        return resolve(self.expander) if self.expander is not None else None

    def preset_list(self) -> tuple[Preset, ...]:
        return tuple(resolve(self.presets))

    def unit_values_function(self) -> UnitValuesOf | None:
        return resolve(self.unit_values) if self.unit_values is not None else None

    def export_meta_columns(self) -> dict[str, str]:
        """Its declared export metadata columns with those every run has (``domain.export_schema.COMMON_META``)."""
        declared = resolve(self.export_meta) if self.export_meta is not None else {}
        return {**declared, **COMMON_META}

    def sample_strata(self) -> Strata[Any] | None:  # Any: a plugin's own item type
        return resolve(self.strata) if self.strata is not None else None


REQUIRED_BENCHMARK_PARTS = ("service", "options", "dataset_source", "summary", "report", "headlines")


def benchmark_problems(descriptor: BenchmarkDescriptor) -> list[str]:
    """What keeps a benchmark descriptor from being whole (empty: nothing); imports its parts."""
    problems: list[str] = []
    for part in REQUIRED_BENCHMARK_PARTS:
        if not getattr(descriptor, part):
            problems.append(f"field {part!r} is missing")
    if (descriptor.compare is None) != (descriptor.comparison is None):
        problems.append("fields 'compare' and 'comparison' are given together or not at all")
    if problems:
        return problems
    try:
        summary = descriptor.summary_model()
        headlines = descriptor.headline_metrics()
        for part in ("service", "options", "dataset_source", "report", "comparison_sections"):
            resolve(getattr(descriptor, part))
        for part in ("compare", "comparison", "expander", "presets", "builder", "unit_values", "strata", "validity"):
            if getattr(descriptor, part):
                resolve(getattr(descriptor, part))
    except PluginError as error:
        return [str(error)]
    if not (isinstance(summary, type) and issubclass(summary, RunSummary)):
        problems.append(f"field 'summary' is {summary!r}, not a RunSummary subclass")
        return problems
    if not headlines:
        problems.append("field 'headlines' declares no headline metric")
    wrong = [h for h in headlines if not isinstance(h, HeadlineMetric)]
    if wrong:
        problems.append(f"field 'headlines' holds {type(wrong[0]).__name__}, not HeadlineMetric")
        return problems
    problems += [f"field 'headlines': {p}" for p in headline_problems(summary, headlines)]
    names = {h.name for h in headlines if isinstance(h, HeadlineMetric)}
    problems += [
        f"field 'validity': rule {rule.name!r} guards {metric!r}, not a headline metric"
        for rule in descriptor.validity_rules() for metric in rule.guards if metric not in names
    ]
    return problems


@dataclass(frozen=True)
class BackendDescriptor:
    """One model backend: ``factory(options, cache_dir)`` builds an object whose
    ``scorer()``, ``templater()``, ``generator()`` and ``pseudo_scorer()`` return
    the port implementations or raise ``CapabilityError``."""

    name: str
    description: str
    factory: str | BackendFactory
    # Its own options model: the common ``model.*`` keys plus the backend's own.
    options: str | type[ModelOptions]
    capabilities: frozenset[str]
    # An extra to install when its imports are missing (``pip install -e '.[...]'``, adapters/optional_modules.py).
    extra: str | None = None
    # Top-level modules the backend imports when it runs (located, not imported, before its factory is).
    requires: tuple[str, ...] = ()
    # ``check(options, cache_dir)``: raises ConfigError / ModelLoadError when ``model.path`` cannot name a
    # model, loading nothing; a run calls it before it writes anything (None: nothing to check up front).
    location_check: str | Callable[..., Any] | None = None  # Any: a backend's own check(options, cache_dir)

    def create(self) -> BackendFactory:
        require_modules(f"model.backend={self.name}", self.requires, self.extra)
        return resolve(self.factory)

    def check_location(self, options: ModelOptions, cache_dir: Path) -> None:
        if self.location_check is not None:
            resolve(self.location_check)(options, cache_dir)

    def options_model(self) -> type[ModelOptions]:
        return resolve(self.options)


@dataclass(frozen=True)
class StoreDescriptor:
    """One result store: ``factory(path)`` opens it; ``default_location`` is its path inside the output folder
    ("" for a store that keeps nothing in it: memory, a database server).

    A store with ``takes_settings`` is opened as ``factory(path, settings)``, ``settings``
    being the ``store.*`` section (``StoreSettings``: a server's DSN, where its password is).
    """

    name: str
    description: str
    factory: str | Callable[..., ResultStore]
    default_location: str
    durable: bool = True
    takes_settings: bool = False
    extra: str | None = None
    requires: tuple[str, ...] = ()

    def open(self, path: Path | None, settings: Any = None) -> ResultStore:  # Any: the store.* section (StoreSettings)
        require_modules(f"store.backend={self.name}", self.requires, self.extra)
        factory = resolve(self.factory)
        return factory(path, settings) if self.takes_settings else factory(path)


BENCHMARKS: tuple[BenchmarkDescriptor, ...] = (
    BenchmarkDescriptor(
        name="twbias",
        title="TWBias",
        culture="Taiwan",
        language="Traditional Chinese",
        service="culturebias.application.twbias.service:TWBiasService",
        options="culturebias.domain.twbias.options:TWBiasOptions",
        dataset_source="culturebias.adapters.twbias.files:TWBiasFiles",
        summary="culturebias.domain.twbias.summary:TWBiasSummary",
        report="culturebias.adapters.twbias.report:TWBiasReport",
        headlines="culturebias.domain.twbias.headlines:HEADLINES",
        compare="culturebias.domain.twbias.comparison:compare_twbias",
        comparison="culturebias.domain.twbias.comparison:TWBiasComparison",
        comparison_sections="culturebias.adapters.twbias.comparison_report:twbias_sections",
        strata="culturebias.domain.twbias.strata:STRATA",
        export_meta="culturebias.domain.twbias.export_columns:TWBIAS_EXPORT_META",
        data_licence="none stated by the authors",
        bundled_data=False,
        data_note="bring your own copy of the authors' files (data.path)",
    ),
    BenchmarkDescriptor(
        name="kobbq",
        title="KoBBQ",
        culture="Korea",
        language="Korean",
        service="culturebias.application.kobbq.service:KoBBQService",
        options="culturebias.domain.kobbq.options:KoBBQOptions",
        dataset_source="culturebias.adapters.kobbq.files:KoBBQFiles",
        summary="culturebias.domain.kobbq.summary:KoBBQSummary",
        report="culturebias.adapters.reports.bbq_report:BBQReport",
        headlines="culturebias.domain.kobbq.headlines:HEADLINES",
        validity="culturebias.domain.kobbq.headlines:VALIDITY",
        compare="culturebias.domain.kobbq.comparison:compare_kobbq",
        comparison="culturebias.domain.kobbq.comparison:KoBBQComparison",
        comparison_sections="culturebias.adapters.reports.comparison_bbq:kobbq_sections",
        unit_values="culturebias.domain.kobbq.units:kobbq_unit_values",
        strata="culturebias.domain.kobbq.strata:STRATA",
        export_meta="culturebias.domain.bbq.export_columns:BBQ_EXPORT_META",
        data_licence="MIT",
        bundled_data=True,
        expander="culturebias.application.kobbq.expand:expand_kobbq",
    ),
    BenchmarkDescriptor(
        name="cbbq",
        title="CBBQ",
        culture="China",
        language="Simplified Chinese",
        service="culturebias.application.cbbq.service:CBBQService",
        options="culturebias.domain.cbbq.options:CBBQOptions",
        dataset_source="culturebias.adapters.cbbq.files:CBBQFiles",
        summary="culturebias.domain.cbbq.summary:CBBQSummary",
        report="culturebias.adapters.reports.bbq_report:BBQReport",
        headlines="culturebias.domain.cbbq.headlines:HEADLINES",
        validity="culturebias.domain.cbbq.headlines:VALIDITY",
        compare="culturebias.domain.cbbq.comparison:compare_cbbq",
        comparison="culturebias.domain.cbbq.comparison:CBBQComparison",
        comparison_sections="culturebias.adapters.reports.comparison_bbq:cbbq_sections",
        presets="culturebias.domain.cbbq.presets:PRESETS",
        unit_values="culturebias.domain.cbbq.units:cbbq_unit_values",
        strata="culturebias.domain.cbbq.strata:STRATA",
        export_meta="culturebias.domain.bbq.export_columns:BBQ_EXPORT_META",
        data_licence="CC BY-SA 4.0",
        bundled_data=True,
        data_note="four categories bundled; point data.path at the full data",
        expander="culturebias.application.cbbq.expand:expand_cbbq",
    ),
    BenchmarkDescriptor(
        name="mcbe",
        title="McBE",
        culture="China",
        language="Simplified Chinese",
        service="culturebias.application.mcbe.service:McBEService",
        options="culturebias.domain.mcbe.options:McBEOptions",
        dataset_source="culturebias.adapters.mcbe.files:McBEFiles",
        summary="culturebias.domain.mcbe.summary:McBESummary",
        report="culturebias.adapters.mcbe.report:McBEReport",
        headlines="culturebias.domain.mcbe.headlines:HEADLINES",
        validity="culturebias.domain.mcbe.validity:VALIDITY",
        compare="culturebias.domain.mcbe.comparison:compare_mcbe",
        comparison="culturebias.domain.mcbe.comparison:McBEComparison",
        comparison_sections="culturebias.adapters.mcbe.comparison_report:mcbe_sections",
        strata="culturebias.domain.mcbe.strata:STRATA",
        export_meta="culturebias.domain.mcbe.export_columns:MCBE_EXPORT_META",
        presets="culturebias.domain.mcbe.presets:PRESETS",
        data_licence="CC BY 4.0 (embedded fixture written for culturebias)",
        bundled_data=True,
        data_note="embedded fixture; point data.path at the full data",
    ),
    BenchmarkDescriptor(
        name="libra",
        title="LIBRA",
        culture="New Zealand",
        language="New Zealand English",
        service="culturebias.application.libra.service:LibraService",
        options="culturebias.domain.libra.options:LibraOptions",
        dataset_source="culturebias.adapters.libra.files:LibraFiles",
        summary="culturebias.domain.libra.summary:LibraSummary",
        report="culturebias.adapters.libra.report:LibraReport",
        headlines="culturebias.domain.libra.headlines:HEADLINES",
        validity="culturebias.domain.libra.validity:VALIDITY",
        compare="culturebias.domain.libra.comparison:compare_libra",
        comparison="culturebias.domain.libra.comparison:LibraComparison",
        comparison_sections="culturebias.adapters.libra.comparison_report:libra_sections",
        builder="culturebias.bootstrap.libra_build_cli:BUILDER",
        unit_values="culturebias.domain.libra.units:libra_unit_values",
        strata="culturebias.domain.libra.strata:STRATA",
        export_meta="culturebias.domain.libra.export_columns:LIBRA_EXPORT_META",
        data_licence="CC BY 4.0 (embedded fixture written for culturebias)",
        bundled_data=True,
        data_note="embedded fixture; point data.path at the full data",
    ),
)

LOCAL = frozenset({"loglikelihood", "pseudo_loglikelihood", "generate", "chat_template"})

BACKENDS: tuple[BackendDescriptor, ...] = (
    BackendDescriptor(
        name="hf",
        description="transformers + PyTorch, local weights (hub id, folder, GGUF or embedded)",
        factory="culturebias.adapters.hf.backend:create_backend",
        options="culturebias.adapters.hf.options:HFOptions",
        capabilities=LOCAL,
        extra="hf",
        requires=("torch", "transformers"),
        location_check="culturebias.adapters.hf.model_location:check_model_location",
    ),
    BackendDescriptor(
        name="onnx",
        description="ONNX Runtime (CUDA provider with onnxruntime-gpu, else CPU); exported once from torch",
        factory="culturebias.adapters.onnx.backend:create_backend",
        options="culturebias.adapters.onnx.options:OnnxOptions",
        capabilities=LOCAL,
        extra="onnx",
        requires=("torch", "transformers", "onnxruntime", "onnx"),
        location_check="culturebias.adapters.hf.model_location:check_model_location",
    ),
    BackendDescriptor(
        name="openai",
        description="any OpenAI-compatible server: chat, completions, echo log-probabilities",
        factory="culturebias.adapters.openai.backend:create_backend",
        options="culturebias.adapters.openai.options:OpenAIOptions",
        capabilities=frozenset({"loglikelihood", "generate"}),
        extra="api",
        requires=("httpx",),
    ),
    BackendDescriptor(
        name="replay",
        description="answers produced elsewhere, read from a JSONL file; or a folder of TWBias result CSVs",
        factory="culturebias.adapters.replay:create_backend",
        options="culturebias.adapters.replay:ReplayOptions",
        capabilities=frozenset({"generate"}),
        location_check="culturebias.adapters.replay:check_replay_path",
    ),
)

if TYPE_CHECKING:  # mypy holds the built-in parts named by dotted path above to their types
    from culturebias.adapters.hf.backend import create_backend as _hf
    from culturebias.adapters.onnx.backend import create_backend as _onnx
    from culturebias.adapters.openai.backend import create_backend as _openai
    from culturebias.adapters.replay import create_backend as _replay
    from culturebias.application.cbbq.service import CBBQService
    from culturebias.application.kobbq.service import KoBBQService
    from culturebias.application.libra.service import LibraService
    from culturebias.application.mcbe.service import McBEService
    from culturebias.application.twbias.service import TWBiasService

    _FACTORIES: tuple[BackendFactory, ...] = (_hf, _onnx, _openai, _replay)
    _SERVICES: tuple[type[BenchmarkService[Any, Any]], ...] = (  # Any: each service's own dataset and plan types
        TWBiasService, KoBBQService, CBBQService, McBEService, LibraService
    )

STORES: tuple[StoreDescriptor, ...] = (
    StoreDescriptor(
        name="sqlite",
        description="one SQLite file (WAL); the default",
        factory="culturebias.adapters.stores.sqlite_store:SQLiteResultStore",
        default_location="results.sqlite",
    ),
    StoreDescriptor(
        name="jsonl",
        description="a folder of JSON Lines files (append-only, torn tails truncated)",
        factory="culturebias.adapters.stores.jsonl_store:JsonlResultStore",
        default_location="results",
    ),
    StoreDescriptor(
        name="memory",
        description="process memory: nothing is kept after the process (tests, embedding hosts)",
        factory="culturebias.adapters.stores.memory_store:MemoryResultStore",
        default_location="",
        durable=False,
    ),
    StoreDescriptor(
        name="postgres",
        description="a PostgreSQL database (store.dsn); several runs may write one database at once",
        factory="culturebias.adapters.stores.postgres_store:open_store",
        default_location="",
        takes_settings=True,
        extra="postgres",
        requires=("psycopg",),
    ),
)

ENTRY_POINT_GROUPS = {
    "benchmark": ("culturebias.benchmarks", BenchmarkDescriptor),
    "backend": ("culturebias.backends", BackendDescriptor),
    "store": ("culturebias.stores", StoreDescriptor),
}


class _Named(Protocol):
    @property
    def name(self) -> str: ...


D = TypeVar("D", bound=_Named)


class _Table(Generic[D]):
    """Descriptors of one kind: built-ins, then plugins (loaded on first use, errors kept per name)."""

    def __init__(self, kind: str, builtins: tuple[D, ...], expected: type[D]):
        self.kind = kind
        self._expected = expected
        self._items: dict[str, D] = {d.name: d for d in builtins}
        self._entry_points: dict[str, metadata.EntryPoint] = {}
        self._errors: dict[str, PluginError] = {}

    def add_entry_point(self, entry_point: metadata.EntryPoint) -> None:
        if entry_point.name in self._items:
            dist = getattr(entry_point.dist, "name", "?")
            self._errors[entry_point.name] = PluginError(
                f"plugin {self.kind} {entry_point.name!r} (entry point {entry_point.value!r} in group {entry_point.group}, "
                f"from {dist}): field 'name' clashes with a built-in {self.kind} of that name"
            )
            return
        self._entry_points[entry_point.name] = entry_point

    def add(self, descriptor: D) -> None:
        name = descriptor.name
        if name in self._items or name in self._entry_points:
            raise PluginError(f"a {self.kind} named {name!r} is already registered")
        self._items[name] = descriptor

    def names(self) -> list[str]:
        return sorted({*self._items, *self._entry_points, *self._errors})

    def _load(self, name: str) -> None:
        group, _ = ENTRY_POINT_GROUPS[self.kind]
        expected = self._expected
        entry_point = self._entry_points.pop(name)
        dist = getattr(entry_point.dist, "name", None) or "an unknown distribution"
        where = f"plugin {self.kind} {name!r} (entry point {entry_point.value!r} in group {group}, from {dist})"
        try:
            loaded = entry_point.load()
        except Exception as error:  # a plugin may fail in any way while importing
            self._errors[name] = PluginError(f"{where} failed to import: {type(error).__name__}: {error}")
            return
        descriptor = loaded() if callable(loaded) and not isinstance(loaded, expected) else loaded
        if not isinstance(descriptor, expected):
            self._errors[name] = PluginError(f"{where} is a {type(descriptor).__name__}, not a {expected.__name__}")
        elif descriptor.name != name:
            self._errors[name] = PluginError(f"{where} declares the name {descriptor.name!r}")
        elif isinstance(descriptor, BenchmarkDescriptor) and (problems := benchmark_problems(descriptor)):
            self._errors[name] = PluginError(f"{where} is not a whole benchmark: " + "; ".join(problems))
        else:
            self._items[name] = descriptor

    def get(self, name: str) -> D:
        if name in self._entry_points:
            self._load(name)
        if name in self._errors:
            raise self._errors[name]
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self.names()) from None

    def all(self) -> list[D | PluginError]:
        """Every descriptor in name order; a plugin that failed to load appears as its error."""
        out: list[D | PluginError] = []
        for name in self.names():
            try:
                out.append(self.get(name))
            except PluginError as error:
                out.append(error)
        return out


@dataclass
class Registry:
    benchmarks: _Table[BenchmarkDescriptor] = field(default_factory=lambda: _Table("benchmark", BENCHMARKS, BenchmarkDescriptor))
    backends: _Table[BackendDescriptor] = field(default_factory=lambda: _Table("backend", BACKENDS, BackendDescriptor))
    stores: _Table[StoreDescriptor] = field(default_factory=lambda: _Table("store", STORES, StoreDescriptor))

    def benchmark(self, name: str) -> BenchmarkDescriptor:
        return self.benchmarks.get(name)

    def backend(self, name: str) -> BackendDescriptor:
        return self.backends.get(name)

    def store(self, name: str) -> StoreDescriptor:
        return self.stores.get(name)

    def discover_plugins(self) -> "Registry":
        tables: dict[str, _Table[Any]] = {"benchmark": self.benchmarks, "backend": self.backends, "store": self.stores}  # Any: one descriptor type per kind
        for kind, (group, _) in ENTRY_POINT_GROUPS.items():
            for entry_point in metadata.entry_points(group=group):
                tables[kind].add_entry_point(entry_point)
        return self


_default: Registry | None = None
_lock = threading.Lock()


def registry() -> Registry:
    """The process-wide registry: built-ins plus every installed plugin."""
    global _default
    with _lock:
        if _default is None:
            _default = Registry().discover_plugins()
        return _default
