"""Where a model comes from (local folder, hub id, GGUF, embedded package) and loading it once."""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from culturebias.adapters.hf.chat_templates import install as install_chat_template
from culturebias.adapters.hf import embedded
from culturebias.adapters.hf.model_location import gguf_file, in_hub_cache, resolve_hub_id
from culturebias.adapters.hf.model_options import DEVICE_NAMES, LocalModelOptions
from culturebias.domain.errors import ConfigError, ModelLoadError
from culturebias.domain.identity import ModelIdentity
from culturebias.domain.model_options import AutoBatch
from culturebias.logs import get_logger

log = get_logger("culturebias.hf")

DTYPES = ("float32", "float16", "bfloat16")


@dataclass(frozen=True)
class ModelSource:
    """What ``from_pretrained`` receives, and how the model is named in results."""

    location: str  # local folder or hub id
    name: str  # ModelIdentity.model
    revision: str | None
    description: str
    is_local: bool
    # A hub id loaded from the local hub cache alone: offline, or the hub could not be reached (model_location.py)
    cache_only: bool = False


def resolve_source(options: LocalModelOptions, cache_dir: Path) -> ModelSource:
    """Resolve ``model.path`` / ``model.gguf_file`` to a loadable location (GGUF converted once)."""
    path = options.path
    gguf = gguf_file(options)
    if gguf is not None:
        folder = embedded.materialise_gguf_file(gguf, cache_dir, trust_remote_code=options.trust_remote_code)
        return ModelSource(str(folder), f"gguf:{gguf.name}", _file_digest(gguf), f"{gguf.name} (GGUF dequantised to float32)", True)
    if embedded.is_embedded(path):
        folder, entry, gguf = embedded.materialise(path, cache_dir)
        version = embedded.package_version(entry, cache_dir)
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
    # A hub id such as "org/name": resolved at once (a mistyped id fails here, not after minutes of retries),
    # then loaded by transformers from the hub, or from its local cache alone.
    cache_only = resolve_hub_id(path, options.revision)
    if not cache_only and not in_hub_cache(path, options.revision):
        log.info("downloading the model from the Hugging Face Hub, once (its files are cached)", model=path)
    return ModelSource(path, path, options.revision, f"hub model {path}", False, cache_only)


def from_pretrained_options(options: LocalModelOptions, source: ModelSource) -> dict[str, Any]:  # Any: transformers' from_pretrained arguments
    """The keyword arguments every ``from_pretrained`` of this source takes."""
    common: dict[str, Any] = {"trust_remote_code": options.trust_remote_code}  # Any: transformers' from_pretrained arguments
    if options.revision and not source.is_local:
        common["revision"] = options.revision
    if source.cache_only:
        common["local_files_only"] = True
    return common


def _file_digest(path: Path) -> str:
    stat = path.stat()
    return hashlib.sha256(json.dumps([path.name, stat.st_size]).encode()).hexdigest()[:12]


def source_weights(source: ModelSource, cache_dir: Path) -> str | None:
    """A fingerprint of the weights of a model folder given by path (``ModelIdentity.weights``).

    Embedded and GGUF models are already named by their package version or file digest.
    """
    if not source.is_local or source.name != source.location:
        return None
    from culturebias.adapters.hf.weights_fingerprint import weights_digest

    return weights_digest(source.location, cache_dir)


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        chosen = "cuda" if torch.cuda.is_available() else "cpu"
        log.info("device chosen", requested="auto", device=chosen)
        return chosen
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ConfigError(f"model.device={device!r} but CUDA is not available on this machine; use model.device=auto or cpu")
        count = torch.cuda.device_count()
        index = int(device.split(":", 1)[1]) if ":" in device else 0
        if index >= count:
            raise ConfigError(f"model.device={device!r} but this machine has {count} CUDA device(s): cuda:0 to cuda:{count - 1}")
    elif device == "mps" and not torch.backends.mps.is_available():
        raise ConfigError("model.device='mps' but the MPS backend (Apple GPU) is not available; use model.device=auto or cpu")
    elif device not in ("cpu", "mps"):
        raise ConfigError(f"model.device={device!r} is not a device: choose {DEVICE_NAMES}")
    return device


def resolve_dtype(name: str):
    import torch

    if name not in DTYPES:
        raise ConfigError(f"model.dtype {name!r}: choose one of {', '.join(DTYPES)}")
    return getattr(torch, name)


def tokenizer_fingerprint(tokenizer: Any) -> str:  # Any: a transformers tokenizer
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
    model: Any  # Any: a transformers model or the ONNX facade
    tokenizer: Any  # Any: a transformers tokenizer
    device: str  # where inputs go (the first device of a model placed by model.device_map)
    dtype: str
    source: ModelSource
    identity: ModelIdentity
    # The options the ports use, settled once the model is placed: model.batch_size=auto
    # resolved to a number; no shared-prefix reuse over a model spread across devices.
    options: LocalModelOptions | None = None


def model_setting(options: LocalModelOptions, source: ModelSource) -> str:
    """The setting that named the model, for error messages: ``model.path='...'`` (and where it was found)."""
    if options.gguf_file:
        return f"model.gguf_file={options.gguf_file!r}"
    named = f"model.path={options.resolved_path()!r}"
    return named if source.location == options.path else f"{named} ({source.location})"


def _has_tokenizer_files(folder: Path) -> bool:
    names = [p.name for p in folder.iterdir()] if folder.is_dir() else []
    return any(n.startswith(("tokenizer", "vocab", "merges", "spiece", "sentencepiece")) or n.endswith((".model", ".tiktoken")) for n in names)


def load_tokenizer(options: LocalModelOptions, source: ModelSource, common: dict[str, Any]) -> Any:  # Any: from_pretrained arguments; a transformers tokenizer
    """The model's tokenizer; ModelLoadError naming the setting when there is none or it cannot load."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(source.location, **common)
    except (OSError, ValueError, TypeError, KeyError) as error:
        if source.is_local and not _has_tokenizer_files(Path(source.location)):
            raise ModelLoadError(
                f"{model_setting(options, source)}: the model folder has no tokenizer (no tokenizer.json, "
                "tokenizer_config.json or vocabulary file); save the model's tokenizer into the same folder"
            ) from None
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ModelLoadError(f"{model_setting(options, source)}: cannot load its tokenizer: {reason}") from None


def load_weights(auto_class: Any, options: LocalModelOptions, source: ModelSource, **kwargs: Any) -> Any:  # Any: a transformers Auto class, its arguments and model
    """``auto_class.from_pretrained``; ModelLoadError naming the setting when the weights cannot load."""
    from culturebias.adapters.hf.library_warnings import silence_library_deprecations

    silence_library_deprecations()  # before the first forward pass: notices about our calls, not the user's
    try:
        with _weight_bar_on_terminals_only():
            return auto_class.from_pretrained(source.location, **kwargs)
    except (OSError, ValueError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ModelLoadError(f"{model_setting(options, source)}: cannot load the model: {reason}") from None


@contextlib.contextmanager
def _weight_bar_on_terminals_only() -> Iterator[None]:
    """transformers draws its own "Loading weights" bar, whatever ``run.progress`` says: into a log file it writes
    lines full of carriage returns. It is switched off while stderr is not a terminal, and restored after."""
    from transformers.utils import logging as hf_logging

    was_on = hf_logging.is_progress_bar_enabled()
    if was_on and not sys.stderr.isatty():
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()


def _placed_devices(model: Any) -> list[str]:  # Any: a transformers model
    """The devices a model placed by ``device_map`` runs on, in layer order (disk-offloaded layers run on the CPU)."""
    placed = []
    for where in getattr(model, "hf_device_map", {}).values():
        device = f"cuda:{where}" if isinstance(where, int) else ("cpu" if where == "disk" else str(where))
        if device not in placed:
            placed.append(device)
    return placed or [str(model.device)]


def hf_identity(source: ModelSource, tokenizer: Any, model: Any, dtype: str, kind: Literal["causal", "masked"], cache_dir: Path) -> ModelIdentity:  # Any: a transformers tokenizer and model
    """The identity of a model loaded by transformers: its source, tokenizer, dtype, kind, size and weights."""
    return ModelIdentity(
        backend="hf",
        model=source.name,
        revision=source.revision,
        tokenizer=tokenizer_fingerprint(tokenizer),
        dtype=dtype,
        kind=kind,
        parameters=sum(p.numel() for p in model.parameters()),
        description=source.description,
        weights=source_weights(source, cache_dir),
    )


def load_causal_lm(options: LocalModelOptions, cache_dir: Path) -> LoadedModel:
    from transformers import AutoModelForCausalLM

    from culturebias.adapters.hf.batch_size import auto_batch_size

    device_map = getattr(options, "device_map", None)
    device = resolve_device(options.device) if not device_map else "auto"
    dtype = resolve_dtype(options.dtype)
    source = resolve_source(options, cache_dir)
    common = from_pretrained_options(options, source)
    log.info("loading model", model=source.name, location=source.location, dtype=options.dtype, device=device, device_map=device_map)
    tokenizer = load_tokenizer(options, source, common)
    # A built-in or file template replaces the tokenizer's own before the fingerprint below takes it in.
    install_chat_template(tokenizer, options.chat_template)
    placement = {"device_map": device_map} if device_map else {}
    model = load_weights(AutoModelForCausalLM, options, source, dtype=dtype, **placement, **common)
    settled: dict[str, Any] = {}  # Any: LocalModelOptions' fields
    if device_map:
        devices = _placed_devices(model)
        device = devices[0]
        log.info("model placed", device_map=device_map, devices=devices)
        if len(devices) > 1 and options.prefix_cache:
            log.info("shared-prefix reuse is off for a model spread over several devices", devices=devices)
            settled["prefix_cache"] = False
    else:
        model.to(device)
    model.eval()
    if device == "cpu":
        _fit_threads_to_cpus()
    if isinstance(options.batch_size, AutoBatch):
        settled["batch_size"] = auto_batch_size(model, device, options.batch_size, max_length=options.max_length)
    identity = hf_identity(source, tokenizer, model, options.dtype, "causal", cache_dir)
    return LoadedModel(model, tokenizer, device, options.dtype, source, identity, options.model_copy(update=settled))
