"""What a local model's weights are: sizes and sha256 hashes of its weight files, cached by mtime.

A model folder whose weights were replaced keeps its path; its fingerprint does
not. Hashing a large model takes a while, so each file's hash is kept in
``<cache_dir>/weights-fingerprints.json`` under its absolute path, size and
mtime, and read from there while those are unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from culturebias.domain.fingerprint import fingerprint
from culturebias.domain.model_options import ModelOptions
from culturebias.logs import get_logger

log = get_logger("culturebias.hf")

CACHE_FILE = "weights-fingerprints.json"
# Weights in every format transformers, ONNX and GGUF use, and the config that gives them their shape.
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".npz", ".gguf", ".onnx", ".onnx_data")
CONFIG_NAMES = ("config.json",)
_lock = threading.Lock()


def weight_files(location: Path) -> list[Path]:
    """The files that decide a model's numbers: weight files and ``config.json`` (a file is itself)."""
    if location.is_file():
        return [location]
    if not location.is_dir():
        return []
    return sorted(
        p
        for p in location.rglob("*")
        if p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(location).parts)
        and (p.suffix in WEIGHT_SUFFIXES or p.name in CONFIG_NAMES or ".safetensors" in p.name)
    )


def weights_fingerprint(location: str | Path, cache_dir: Path | None) -> dict[str, str]:
    """``{file: "<size>:<sha256 prefix>"}`` for each weight file under ``location`` (names relative to it)."""
    root = Path(location).expanduser()
    files = weight_files(root)
    cache_path = Path(cache_dir) / CACHE_FILE if cache_dir is not None else None
    cache = _read_cache(cache_path)
    result: dict[str, str] = {}
    changed = False
    for file in files:
        stat = file.stat()
        entry_key = str(file.resolve())
        entry = cache.get(entry_key)
        if not (isinstance(entry, dict) and entry.get("size") == stat.st_size and entry.get("mtime_ns") == stat.st_mtime_ns):
            log.info("hashing model weights (once per file version)", file=str(file), bytes=stat.st_size)
            entry = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": _sha256(file)}
            cache[entry_key] = entry
            changed = True
        name = file.name if root.is_file() else file.relative_to(root).as_posix()
        result[name] = f"{entry['size']}:{entry['sha256'][:16]}"
    if changed and cache_path is not None:
        _write_cache(cache_path, cache)
    return result


def weights_digest(location: str | Path, cache_dir: Path | None) -> str | None:
    """One short fingerprint of all weight files (None where there are none)."""
    files = weights_fingerprint(location, cache_dir)
    return fingerprint(files) if files else None


def model_weights_identity(options: ModelOptions, cache_dir: Path | None) -> dict[str, str] | None:
    """The weights ``model.*`` names, before anything loads: for the resume identity of a run.

    A local folder, a GGUF file: each weight file's size and hash. An embedded model:
    its package and version. A hub id (pinned by ``model.revision``) or a remote
    backend: None.
    """
    from culturebias.adapters.hf import embedded
    from culturebias.adapters.hf.model_options import LocalModelOptions

    if not isinstance(options, LocalModelOptions):
        return None
    path = options.path
    if options.gguf_file:
        gguf = Path(options.gguf_file).expanduser()
        if not gguf.is_absolute() and path and Path(path).expanduser().is_dir():
            gguf = Path(path).expanduser() / gguf
        return weights_fingerprint(gguf, cache_dir) if gguf.is_file() else None
    if embedded.is_embedded(path):
        entry = embedded.embedded_entry(path)
        return {"package": f"{entry.distribution}=={embedded.package_version(entry) or 'absent'}"}
    local = Path(path or "").expanduser()
    if local.is_dir() or local.is_file():
        return weights_fingerprint(local, cache_dir) or None
    return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_cache(path: Path | None) -> dict[str, Any]:  # Any: the cache file's JSON
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_cache(path: Path, cache: dict[str, Any]) -> None:  # Any: the cache file's JSON
    """Merged with what another process may have written meanwhile; renamed into place."""
    with _lock:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            merged = {**_read_cache(path), **cache}
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(merged, handle)
                os.replace(tmp, path)
            finally:
                Path(tmp).unlink(missing_ok=True)
        except OSError as error:  # a read-only cache only costs hashing again next time
            log.warning("cannot cache weight fingerprints", file=str(path), error=str(error))
