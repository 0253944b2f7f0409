"""The descriptors the registry holds: a benchmark, a model backend and a result store, each declared once.

A built-in benchmark declares its descriptor beside its adapters (``adapters/<benchmark>/benchmark.py``);
another distribution declares one and points an entry point at it. ``bootstrap/registry.py`` lists the
built-ins and loads the plugins. Parts are named by dotted path (``module:attribute``) or held directly, so
reading a descriptor imports nothing heavy.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from dataclasses import dataclass
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable, Literal, TypeVar

from pydantic import BaseModel

from culturebias.domain.model_options import ModelOptions
from culturebias.adapters.install.optional_modules import require_modules
from culturebias.application.benchmark import BenchmarkService
from culturebias.application.compare import CompareBody, Comparer
from culturebias.ports.model_backend import ModelBackend
from culturebias.ports.reporting import ReportWriter
from culturebias.domain.comparison.envelope import Comparison
from culturebias.domain.comparison.headline_body import HeadlineComparison, compare_headlines
from culturebias.domain.errors import PluginError
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
    # An extra to install when its imports are missing (``pip install -e '.[...]'``, adapters/install/optional_modules.py).
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
