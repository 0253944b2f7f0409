"""Which file-based result store a path holds: a .sqlite file, a JSONL store folder, or a run folder holding one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from culturebias.adapters.plugins.descriptors import StoreDescriptor
from culturebias.domain.errors import ConfigError
from culturebias.ports.results import ResultStore


def store_at(path: Path, store: Callable[[str], StoreDescriptor], must_exist: bool = False) -> ResultStore:
    """The store at ``path``, opened by its registered descriptor (``store(name)``); a path that names a .sqlite or .db
    file that is not there is a new SQLite store unless ``must_exist``; no store found is a ``ConfigError``."""
    if path.is_file() or (path.suffix in (".sqlite", ".db") and not must_exist):
        return store("sqlite").open(path)
    if (path / "runs.jsonl").is_file():
        return store("jsonl").open(path)
    for descriptor in (store("sqlite"), store("jsonl")):
        candidate = path / descriptor.default_location
        if candidate.exists():
            return descriptor.open(candidate)
    raise ConfigError(f"no result store at {path} (expected a .sqlite file, a JSONL store folder or a run folder)")
