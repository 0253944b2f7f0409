"""The one registry: every benchmark, model backend and result store, declared once.

Built-in pieces are declared below; other distributions add theirs through
Python entry points (groups ``culturebias.benchmarks``, ``culturebias.backends``,
``culturebias.stores``), each pointing at a descriptor object. Descriptors name
their parts by dotted path (``module:attribute``) or hold them directly, so
reading the registry (for ``culturebias list``, ``--help`` or settings
validation) imports nothing heavy. The CLI's choices, settings validation,
``culturebias list``, the contract-test parametrisation and the README table
all read it; ``tests/unit/test_registry.py`` checks that every descriptor is
complete.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Callable, Generic, Literal, TypeVar

from pydantic import BaseModel

from culturebias.adapters.optional_modules import require_modules
from culturebias.domain.errors import PluginError, UnknownNameError

T = TypeVar("T")

# What a model backend can do; protocols check the capability they need before a run.
Capability = Literal["loglikelihood", "pseudo_loglikelihood", "generate", "chat_template"]
CAPABILITIES: tuple[Capability, ...] = ("loglikelihood", "pseudo_loglikelihood", "generate", "chat_template")


def import_object(dotted: str) -> Any:
    """``package.module:attribute`` → the attribute (imports the module)."""
    module_name, _, attribute = dotted.partition(":")
    if not attribute:
        raise PluginError(f"{dotted!r} is not a 'module:attribute' path")
    try:
        target: Any = importlib.import_module(module_name)
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
    """One benchmark protocol: everything the framework needs to run, validate and report it."""

    name: str
    title: str
    culture: str
    language: str
    # The protocol service class: ``Service(options)`` with ``preflight(ctx) -> plan``
    # and ``run(ctx, dataset, plan) -> ProtocolOutcome``.
    service: str | type
    # The pydantic model of ``protocol.*`` options.
    options: str | type[BaseModel]
    # ``DatasetSource`` class, constructed as ``Source(path: str | None)``.
    dataset_source: str | type
    # The benchmark's ``RunSummary`` subclass (the JSON Schema of summary.json).
    summary: str | type[BaseModel]
    # ``ReportWriter`` class, constructed without arguments.
    report: str | type
    data_licence: str
    bundled_data: bool  # runs with no data.path on data that ships with culturebias
    data_note: str = ""
    # ``expand(options_dict, templates, write) -> int`` for ``culturebias expand``: ``templates`` is
    # ``dataset_source.template_files(data.path)``, ``write`` takes the rows (JSON objects) and counts them.
    expander: str | Callable[..., int] | None = None

    def service_class(self) -> type:
        return resolve(self.service)

    def options_model(self) -> type[BaseModel]:
        return resolve(self.options)

    def source_class(self) -> type:
        return resolve(self.dataset_source)

    def summary_model(self) -> type[BaseModel]:
        return resolve(self.summary)

    def report_writer(self) -> type:
        return resolve(self.report)

    def expand_function(self) -> Callable[..., int] | None:
        return resolve(self.expander) if self.expander is not None else None


@dataclass(frozen=True)
class BackendDescriptor:
    """One model backend: ``factory(options, cache_dir)`` builds an object whose
    ``scorer()``, ``templater()``, ``generator()`` and ``pseudo_scorer()`` return
    the port implementations or raise ``CapabilityError``."""

    name: str
    description: str
    factory: str | Callable[..., Any]
    # Its own options model: the common ``model.*`` keys plus the backend's own.
    options: str | type[BaseModel]
    capabilities: frozenset[str]
    # An extra to install when its imports are missing (``pip install 'culturebias[...]'``).
    extra: str | None = None
    # Top-level modules the backend imports when it runs (located, not imported, before its factory is).
    requires: tuple[str, ...] = ()

    def create(self) -> Callable[..., Any]:
        require_modules(f"model.backend={self.name}", self.requires, self.extra)
        return resolve(self.factory)

    def options_model(self) -> type[BaseModel]:
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
    factory: str | Callable[..., Any]
    default_location: str
    durable: bool = True
    takes_settings: bool = False
    extra: str | None = None
    requires: tuple[str, ...] = ()

    def open(self, path: Any, settings: Any = None) -> Any:
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
        dataset_source="culturebias.adapters.datasets.twbias_files:TWBiasFiles",
        summary="culturebias.domain.twbias.summary:TWBiasSummary",
        report="culturebias.adapters.reports.twbias_report:TWBiasReport",
        data_licence="none stated by the authors",
        bundled_data=False,
        data_note="bring your own copy of the authors' files (data.path)",
    ),
    BenchmarkDescriptor(
        name="kobbq",
        title="KoBBQ",
        culture="Korea",
        language="Korean",
        service="culturebias.application.bbq.service:KoBBQService",
        options="culturebias.domain.bbq.options:KoBBQOptions",
        dataset_source="culturebias.adapters.datasets.kobbq_files:KoBBQFiles",
        summary="culturebias.domain.bbq.summary:KoBBQSummary",
        report="culturebias.adapters.reports.bbq_report:BBQReport",
        data_licence="MIT",
        bundled_data=True,
        expander="culturebias.application.kobbq.expand:expand_kobbq",
    ),
    BenchmarkDescriptor(
        name="cbbq",
        title="CBBQ",
        culture="China",
        language="Simplified Chinese",
        service="culturebias.application.bbq.service:CBBQService",
        options="culturebias.domain.bbq.options:CBBQOptions",
        dataset_source="culturebias.adapters.datasets.cbbq_files:CBBQFiles",
        summary="culturebias.domain.bbq.summary:CBBQSummary",
        report="culturebias.adapters.reports.bbq_report:BBQReport",
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
        dataset_source="culturebias.adapters.datasets.mcbe_files:McBEFiles",
        summary="culturebias.domain.mcbe.summary:McBESummary",
        report="culturebias.adapters.reports.mcbe_report:McBEReport",
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
        dataset_source="culturebias.adapters.datasets.libra_files:LibraFiles",
        summary="culturebias.domain.libra.summary:LibraSummary",
        report="culturebias.adapters.reports.libra_report:LibraReport",
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
    ),
    BackendDescriptor(
        name="onnx",
        description="ONNX Runtime (CUDA provider with onnxruntime-gpu, else CPU); exported once from torch",
        factory="culturebias.adapters.onnx.backend:create_backend",
        options="culturebias.adapters.onnx.options:OnnxOptions",
        capabilities=LOCAL,
        extra="onnx",
        requires=("torch", "transformers", "onnxruntime", "onnx"),
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
    ),
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


class _Table(Generic[T]):
    """Descriptors of one kind: built-ins, then plugins (loaded on first use, errors kept per name)."""

    def __init__(self, kind: str, builtins: tuple[T, ...]):
        self.kind = kind
        self._items: dict[str, T] = {d.name: d for d in builtins}  # type: ignore[attr-defined]
        self._entry_points: dict[str, metadata.EntryPoint] = {}
        self._errors: dict[str, PluginError] = {}

    def add_entry_point(self, entry_point: metadata.EntryPoint) -> None:
        if entry_point.name in self._items:
            dist = getattr(entry_point.dist, "name", "?")
            self._errors[entry_point.name] = PluginError(
                f"plugin {self.kind} {entry_point.name!r} from {dist} clashes with a built-in {self.kind} of that name"
            )
            return
        self._entry_points[entry_point.name] = entry_point

    def add(self, descriptor: T) -> None:
        name = descriptor.name  # type: ignore[attr-defined]
        if name in self._items or name in self._entry_points:
            raise PluginError(f"a {self.kind} named {name!r} is already registered")
        self._items[name] = descriptor

    def names(self) -> list[str]:
        return sorted({*self._items, *self._entry_points, *self._errors})

    def _load(self, name: str) -> None:
        group, expected = ENTRY_POINT_GROUPS[self.kind]
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
        elif descriptor.name != name:  # type: ignore[attr-defined]
            self._errors[name] = PluginError(f"{where} declares the name {descriptor.name!r}")  # type: ignore[attr-defined]
        else:
            self._items[name] = descriptor

    def get(self, name: str) -> T:
        if name in self._entry_points:
            self._load(name)
        if name in self._errors:
            raise self._errors[name]
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self.names()) from None

    def all(self) -> list[T | PluginError]:
        """Every descriptor in name order; a plugin that failed to load appears as its error."""
        out: list[T | PluginError] = []
        for name in self.names():
            try:
                out.append(self.get(name))
            except PluginError as error:
                out.append(error)
        return out


@dataclass
class Registry:
    benchmarks: _Table[BenchmarkDescriptor] = field(default_factory=lambda: _Table("benchmark", BENCHMARKS))
    backends: _Table[BackendDescriptor] = field(default_factory=lambda: _Table("backend", BACKENDS))
    stores: _Table[StoreDescriptor] = field(default_factory=lambda: _Table("store", STORES))

    def benchmark(self, name: str) -> BenchmarkDescriptor:
        return self.benchmarks.get(name)

    def backend(self, name: str) -> BackendDescriptor:
        return self.backends.get(name)

    def store(self, name: str) -> StoreDescriptor:
        return self.stores.get(name)

    def discover_plugins(self) -> "Registry":
        tables = {"benchmark": self.benchmarks, "backend": self.backends, "store": self.stores}
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
