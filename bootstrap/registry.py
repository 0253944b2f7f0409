"""The one registry: every benchmark, model backend and result store, declared once.

The descriptor classes live in ``adapters/plugins/descriptors.py``; each built-in benchmark
declares its descriptor beside its adapters (``adapters/<benchmark>/benchmark.py``) and is
listed here, with the built-in backends and stores. Other distributions add theirs through
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

import threading
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from culturebias.adapters.cbbq.benchmark import CBBQ
from culturebias.adapters.kobbq.benchmark import KOBBQ
from culturebias.adapters.libra.benchmark import LIBRA
from culturebias.adapters.mcbe.benchmark import MCBE
from culturebias.adapters.install.optional_modules import require_modules
from culturebias.adapters.plugins.descriptors import (
    CAPABILITIES,
    REQUIRED_BENCHMARK_PARTS,
    BackendDescriptor,
    BackendFactory,
    BenchmarkDescriptor,
    Capability,
    Sections,
    StoreDescriptor,
    benchmark_problems,
    import_object,
    resolve,
)
from culturebias.adapters.twbias.benchmark import TWBIAS
from culturebias.domain.errors import PluginError, UnknownNameError

# Names other modules, tests, the docs and plugins import from here.
__all__ = [
    "BACKENDS", "BENCHMARKS", "CAPABILITIES", "LOCAL", "REQUIRED_BENCHMARK_PARTS", "STORES", "BackendDescriptor",
    "BackendFactory", "BenchmarkDescriptor", "Capability", "Registry", "Sections", "StoreDescriptor",
    "benchmark_problems", "import_object", "registry", "require_modules", "resolve",
]

BENCHMARKS: tuple[BenchmarkDescriptor, ...] = (TWBIAS, KOBBQ, CBBQ, MCBE, LIBRA)

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
        factory="culturebias.adapters.replay.backend:create_backend",
        options="culturebias.adapters.replay.backend:ReplayOptions",
        capabilities=frozenset({"generate"}),
        location_check="culturebias.adapters.replay.backend:check_replay_path",
    ),
)

if TYPE_CHECKING:  # mypy holds the built-in parts named by dotted path above to their types
    from culturebias.adapters.hf.backend import create_backend as _hf
    from culturebias.adapters.onnx.backend import create_backend as _onnx
    from culturebias.adapters.openai.backend import create_backend as _openai
    from culturebias.adapters.replay.backend import create_backend as _replay
    from culturebias.application.benchmark import BenchmarkService
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
