"""Whether ``model.path`` can name a model, checked before a run writes anything; a hub id is resolved at once.

hf and onnx load a model from ``embedded:<name>``, a GGUF file, a local folder or a
Hugging Face hub id. ``check_model_location`` looks without loading anything (no torch):
an unknown embedded name, a path that does not exist, a folder without ``config.json`` or
a missing GGUF file is a ``ConfigError``. A hub id that does not resolve is a
``ModelLoadError`` naming the id and how to point at a local folder:

- with ``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) set, at once unless the local hub
  cache holds it;
- otherwise after one request to the hub (no retries): an id the hub does not know fails
  there; a hub that cannot be reached (no network, a proxy refusing) fails unless the
  local hub cache holds the id, which is then loaded from the cache alone
  (``local_files_only``), so no download is attempted and retried.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from culturebias.domain.errors import ConfigError, ModelLoadError
from culturebias.logs import get_logger

log = get_logger("culturebias.hf")

OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
HUB_TIMEOUT_S = 10.0
MODEL_FILES = ("config.json", "adapter_config.json")
# (hub id, revision) → whether it loads from the local cache only; a resolution is made once per process
_resolved: dict[tuple[str, str | None], bool] = {}


def hub_offline() -> bool:
    return any(os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on") for name in OFFLINE_VARIABLES)


def in_hub_cache(repo_id: str, revision: str | None) -> bool:
    """Whether the local hub cache holds the model's config (what from_pretrained reads first)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    try:
        found = try_to_load_from_cache(repo_id, "config.json", revision=revision)
    except Exception:  # a malformed id: huggingface_hub validates it here too
        return False
    return isinstance(found, str)


def _ask_hub(repo_id: str, revision: str | None) -> None:
    from huggingface_hub import model_info

    model_info(repo_id, revision=revision, timeout=HUB_TIMEOUT_S)


def _not_found(error: BaseException) -> bool:
    """The hub answered and does not have it (or will not give it): a mistyped id, a revision, a gated model."""
    names = {kind.__name__ for kind in type(error).__mro__}
    return bool(names & {"RepositoryNotFoundError", "RevisionNotFoundError", "GatedRepoError", "HFValidationError"})


def _hint(repo_id: str) -> str:
    return (
        f"model.path={repo_id!r} is not a file or folder on this machine, so it was taken as a Hugging Face hub id, "
        "and that id does not resolve"
    )


HOW_TO_FIX = (
    "to use a model on this machine, point model.path at its folder (config.json, weights and tokenizer files), "
    "e.g. --set model.path=/models/my-model; a model already downloaded loads offline with HF_HUB_OFFLINE=1"
)


def resolve_hub_id(repo_id: str, revision: str | None, ask: Callable[[str, str | None], None] | None = None) -> bool:
    """Check that a hub id can be loaded; True when it must load from the local hub cache alone."""
    key = (repo_id, revision)
    if key in _resolved:
        return _resolved[key]
    cached = in_hub_cache(repo_id, revision)
    if hub_offline():
        if not cached:
            variable = next(name for name in OFFLINE_VARIABLES if os.environ.get(name))
            raise ModelLoadError(f"{_hint(repo_id)}: {variable} is set and the local hub cache does not hold it; {HOW_TO_FIX}")
        _resolved[key] = True
        return True
    try:
        (ask or _ask_hub)(repo_id, revision)
    except Exception as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if _not_found(error):
            at = f" at revision {revision!r}" if revision else ""
            raise ModelLoadError(f"{_hint(repo_id)}: the hub has no such model{at} ({reason}); {HOW_TO_FIX}") from None
        if not cached:
            raise ModelLoadError(
                f"{_hint(repo_id)}: the hub cannot be reached ({type(error).__name__}: {reason}) and the local hub "
                f"cache does not hold it; {HOW_TO_FIX}"
            ) from None
        log.warning("the hub cannot be reached; loading the model from the local hub cache", model=repo_id, reason=reason)
        _resolved[key] = True
        return True
    _resolved[key] = False
    return False


def is_hub_id(path: str) -> bool:
    """A ``model.path`` that is not on this machine and does not look like a path: taken as a hub id."""
    local = Path(path).expanduser()
    return not local.exists() and not path.startswith((".", "/", "~")) and local.suffix != ".gguf"


def gguf_file(options: Any) -> Path | None:  # Any: a local backend's options (HFOptions, OnnxOptions)
    """``model.gguf_file`` as a path (relative to a ``model.path`` folder); None when it is unset."""
    if not options.gguf_file:
        return None
    gguf = Path(options.gguf_file).expanduser()
    if not gguf.is_absolute() and options.path and Path(options.path).expanduser().is_dir():
        gguf = Path(options.path).expanduser() / gguf
    return gguf


def check_model_location(options: Any, cache_dir: Path) -> None:  # Any: a local backend's options (HFOptions, OnnxOptions)
    """ConfigError / ModelLoadError when ``model.path`` (or ``model.gguf_file``) cannot name a model; loads nothing."""
    from culturebias.adapters.hf import embedded

    path = options.path
    gguf = gguf_file(options)
    if gguf is not None:
        if not gguf.is_file():
            raise ConfigError(f"model.gguf_file={options.gguf_file!r}: no such file ({gguf})")
        return
    if embedded.is_embedded(path):
        embedded.embedded_entry(path)  # an unknown name is a ConfigError listing the embedded models
        return
    local = Path(path).expanduser()
    if local.suffix == ".gguf":
        if not local.is_file():
            raise ConfigError(f"model.path={path!r}: no such GGUF file")
        return
    if local.is_dir():
        if not any((local / name).is_file() for name in MODEL_FILES):
            raise ConfigError(f"model.path={path!r} is a folder without config.json: not a model folder")
        return
    if local.exists() or not is_hub_id(path):
        raise ConfigError(f"model.path={path!r} is not a model folder" + ("" if local.exists() else " (no such file or folder)"))
    resolve_hub_id(path, options.revision)
