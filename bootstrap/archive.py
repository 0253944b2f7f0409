"""The archive of finished runs, composed: summary files read by the registered benchmarks' models, stores
opened by the registered store backends (``ARCHIVE``, the ``ports.run_archive.RunArchive`` every use case
that reads runs is given), and the public ``load_summary`` / ``open_store`` of the API."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from culturebias.adapters.stores.store_at import store_at
from culturebias.adapters.stores.summary_files import SummaryFiles
from culturebias.bootstrap.call_settings import is_store, section
from culturebias.bootstrap.container import build_store
from culturebias.bootstrap.registry import registry
from culturebias.bootstrap.settings import Settings, StoreSettings
from culturebias.domain.errors import ConfigError
from culturebias.domain.summary import RunSummary
from culturebias.ports.results import ResultStore

StoreInput = StoreSettings | Mapping[str, Any] | str | Path | ResultStore  # Any: a settings section as a dict (TOML/JSON values)


def open_store(store: StoreInput, *, must_exist: bool = False) -> ResultStore:
    """A result store from settings, a dict, a path (a .sqlite file, a JSONL folder or a run folder),
    a ``postgresql://`` DSN (the password from $PGPASSWORD or ~/.pgpass) or as it is.

    ``must_exist``: a store file or folder that is not there is a ``ConfigError``, not a new empty store.
    """
    if is_store(store):
        return store
    if isinstance(store, str) and store.startswith(("postgresql://", "postgres://")):
        return build_store(Settings(store=StoreSettings(backend="postgres", dsn=store)), None)
    if isinstance(store, (str, Path)):
        return store_at(Path(store).expanduser(), registry().store, must_exist)
    settings = StoreSettings.model_validate(section(store))  # type: ignore[arg-type]  # a ResultStore was returned above
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


def _summary_model(benchmark: str) -> type[RunSummary]:
    return registry().benchmark(benchmark).summary_model()


def _open(store: object, must_exist: bool) -> ResultStore:
    return open_store(store, must_exist=must_exist)  # type: ignore[arg-type]  # a StoreRef is what open_store takes


ARCHIVE = SummaryFiles(_summary_model, _open)


def load_summary(path: str | Path) -> RunSummary:
    """A summary.json (or a run folder holding one) as its benchmark's typed summary."""
    return ARCHIVE.load_summary(path)


def summary_from_dict(payload: Mapping[str, Any], where: str = "summary") -> RunSummary:  # Any: JSON values
    """A stored summary object as its benchmark's typed summary; ``where`` names it in errors."""
    return ARCHIVE.summary_from_dict(payload, where)
