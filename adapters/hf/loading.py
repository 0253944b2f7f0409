"""Where a model comes from (local folder, hub id, GGUF, embedded package) and loading it once."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from culturebias.adapters.hf import embedded
from culturebias.adapters.model_options import LocalModelOptions
from culturebias.domain.errors import ConfigError
from culturebias.domain.identity import ModelIdentity

log = structlog.get_logger("culturebias.hf")

DTYPES = ("float32", "float16", "bfloat16")


@dataclass(frozen=True)
class ModelSource:
    """What ``from_pretrained`` receives, and how the model is named in results."""

    location: str  # local folder or hub id
    name: str  # ModelIdentity.model
    revision: str | None
    description: str
    is_local: bool


def resolve_source(options: LocalModelOptions, cache_dir: Path) -> ModelSource:
    """Resolve ``model.path`` / ``model.gguf_file`` to a loadable location (GGUF converted once)."""
    path = options.path
    if options.gguf_file:
        gguf = Path(options.gguf_file).expanduser()
        if not gguf.is_absolute() and path and Path(path).expanduser().is_dir():
            gguf = Path(path).expanduser() / gguf
        folder = embedded.materialise_gguf_file(gguf, cache_dir, trust_remote_code=options.trust_remote_code)
        return ModelSource(str(folder), f"gguf:{gguf.name}", _file_digest(gguf), f"{gguf.name} (GGUF dequantised to float32)", True)
    if embedded.is_embedded(path):
        folder, entry, gguf = embedded.materialise(path, cache_dir)
        version = embedded.package_version(entry)
        revision = f"{entry.distribution}=={version}" if version else None
        return ModelSource(str(folder), embedded.EMBEDDED_PREFIX + entry.name, revision, embedded.description(entry), True)
    assert path is not None
    local = Path(path).expanduser()
    if local.suffix == ".gguf":
        folder = embedded.materialise_gguf_file(local, cache_dir, trust_remote_code=options.trust_remote_code)
        return ModelSource(str(folder), f"gguf:{local.name}", _file_digest(local), f"{local.name} (GGUF dequantised to float32)", True)
    if local.is_dir():
        return ModelSource(str(local.resolve()), str(local.resolve()), options.revision, f"local model {local.name}", True)
    if local.exists() or path.startswith((".", "/", "~")):
        raise ConfigError(f"model.path {path!r} is not a model folder")
    # A hub id such as "org/name": loaded by transformers (needs network or its hub cache).
    return ModelSource(path, path, options.revision, f"hub model {path}", False)


def _file_digest(path: Path) -> str:
    stat = path.stat()
    return hashlib.sha256(json.dumps([path.name, stat.st_size]).encode()).hexdigest()[:12]


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        chosen = "cuda" if torch.cuda.is_available() else "cpu"
        log.info("device chosen", requested="auto", device=chosen)
        return chosen
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"model.device={device!r} but CUDA is not available")
    return device


def resolve_dtype(name: str):
    import torch

    if name not in DTYPES:
        raise ConfigError(f"model.dtype {name!r}: choose one of {', '.join(DTYPES)}")
    return getattr(torch, name)


def tokenizer_fingerprint(tokenizer: Any) -> str:
    """A hash of everything that decides token ids: the tokenizer's full serialisation and special tokens."""
    backend = getattr(tokenizer, "backend_tokenizer", None) or getattr(tokenizer, "_tokenizer", None)
    if backend is not None and hasattr(backend, "to_str"):
        body = backend.to_str()
    else:
        body = json.dumps(sorted(tokenizer.get_vocab().items()), ensure_ascii=False)
    specials = json.dumps(
        {"specials": {k: str(v) for k, v in tokenizer.special_tokens_map.items()}, "template": tokenizer.chat_template or ""},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256((body + specials).encode("utf-8")).hexdigest()[:16]


def _fit_threads_to_cpus() -> None:
    """torch counts the host's cores; in a container limited to fewer, that oversubscribes them."""
    import os

    import torch

    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    if torch.get_num_threads() > available:
        torch.set_num_threads(available)
    log.info("cpu threads", threads=torch.get_num_threads())


@dataclass
class LoadedModel:
    model: Any
    tokenizer: Any
    device: str
    dtype: str
    source: ModelSource
    identity: ModelIdentity


def load_causal_lm(options: LocalModelOptions, cache_dir: Path) -> LoadedModel:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = resolve_source(options, cache_dir)
    device = resolve_device(options.device)
    dtype = resolve_dtype(options.dtype)
    common: dict[str, Any] = {"trust_remote_code": options.trust_remote_code}
    if options.revision and not source.is_local:
        common["revision"] = options.revision
    log.info("loading model", model=source.name, location=source.location, dtype=options.dtype, device=device)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source.location, **common)
        model = AutoModelForCausalLM.from_pretrained(source.location, dtype=dtype, **common)
    except OSError as error:
        raise ConfigError(f"cannot load model {source.location!r}: {error}") from None
    model.to(device)
    model.eval()
    if device == "cpu":
        _fit_threads_to_cpus()
    identity = ModelIdentity(
        backend="hf",
        model=source.name,
        revision=source.revision,
        tokenizer=tokenizer_fingerprint(tokenizer),
        dtype=options.dtype,
        kind="causal",
        parameters=sum(p.numel() for p in model.parameters()),
        description=source.description,
    )
    return LoadedModel(model, tokenizer, device, options.dtype, source, identity)
