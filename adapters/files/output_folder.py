"""The output folder (``--out``): checked before a run starts, created with the user's umask.

A path through a file, or a folder the user cannot write, is a configuration
error naming the folder, never an ``OSError`` traceback halfway through a run.
"""

from __future__ import annotations

import os
from pathlib import Path

from culturebias.domain.errors import ConfigError


def _nearest_existing(path: Path) -> Path:
    existing = path
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    return existing


def check_output_folder(path: Path) -> None:
    """Raise ``ConfigError`` unless ``path`` is, or can become, a folder this process writes. Writes nothing."""
    existing = _nearest_existing(path)
    if existing.exists() and not existing.is_dir():
        where = "is a file" if existing == path else f"lies under {existing}, a file"
        raise ConfigError(f"output folder {path} {where}, not a folder (--out)")
    if not os.access(existing, os.W_OK | os.X_OK):
        where = "" if existing == path else f" (its nearest existing folder {existing} is not writable)"
        raise ConfigError(f"output folder {path} is not writable{where} (--out)")


def make_output_folder(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"output folder {path} cannot be created: {error.strerror or error} (--out)") from None


def check_writable_store(location: Path | None, backend: str = "sqlite") -> None:
    """A store this process cannot create or write (a teammate's, a path through a file) is a ConfigError up front."""
    if location is None:
        return
    if not location.exists():
        existing = _nearest_existing(location)
        if existing.exists() and not existing.is_dir():
            raise ConfigError(f"result store {location} lies under {existing}, a file (store.path)")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise ConfigError(f"result store {location} cannot be created: {existing} is not writable (store.path)")
        return
    if backend == "sqlite" and location.is_dir():
        raise ConfigError(f"result store {location} is a folder, not a SQLite file (store.path)")
    if backend == "jsonl" and location.is_file():
        raise ConfigError(f"result store {location} is a file, not a JSONL store folder (store.path)")
    targets = [location] if location.is_file() else [location, *(p for p in location.rglob("*") if p.is_file())]
    for target in targets:
        if not os.access(target, os.W_OK | (os.X_OK if target.is_dir() else 0)):
            raise ConfigError(
                f"result store {location} is not writable by this user ({target}); "
                "set store.path or choose another --out"
            )


class LocalOutputFolders:
    """``ports.output_folders.OutputFolders`` on this machine's file system."""

    def check(self, path: Path) -> None:
        check_output_folder(path)

    def make(self, path: Path) -> None:
        make_output_folder(path)
