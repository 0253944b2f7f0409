"""Pseudo-log-likelihood (PROTOCOLS §0.2) with the hf masked scorer's algorithm over ONNX Runtime.

``HFMaskedScorer`` encodes, masks, packs and sums; only its forward passes go to
the ONNX session (``OrtMaskedLM``). Its constructor loads a torch model, so this
subclass sets up the same state from the exported model instead.
"""

from __future__ import annotations

from culturebias.adapters.hf.masked import LOGITS_BUDGET, SPAN_RULE, HFMaskedScorer, _max_positions
from culturebias.adapters.hf.local_backend import score_provenance
from culturebias.adapters.hf.model_options import LocalModelOptions
from culturebias.adapters.onnx.model import OnnxModel, settled_options
from culturebias.domain.errors import ConfigError


class OnnxMaskedScorer(HFMaskedScorer):
    def __init__(self, loaded: OnnxModel, options: LocalModelOptions, *, logits_budget: int | None = None):  # noqa: D107
        options = settled_options(loaded, options)
        tokenizer = loaded.tokenizer
        name = loaded.identity.model
        if not getattr(tokenizer, "is_fast", False):
            raise ConfigError(f"masked LM {name!r}: a fast tokenizer is needed (character offsets of tokens)")
        if tokenizer.mask_token_id is None:
            raise ConfigError(f"masked LM {name!r}: its tokenizer has no mask token")
        self._device = "cpu"  # where the torch tensors around the session live
        self._model = loaded.model
        self._tokenizer = tokenizer
        self._batch_size = options.settled_batch_size()
        self._max_positions = _max_positions(loaded.model, tokenizer, options.max_length)
        self._budget = logits_budget or LOGITS_BUDGET["cuda" if loaded.device.startswith("cuda") else "cpu"]
        self._pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self._identity = loaded.identity
        self._provenance = score_provenance("onnx", options, device=loaded.device, boundary_rule=SPAN_RULE)
