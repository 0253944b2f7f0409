"""A loaded ONNX model, and the options it settles (``model.batch_size=auto``); used by every onnx port."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from culturebias.adapters.hf.model_options import LocalModelOptions
from culturebias.domain.identity import ModelIdentity
from culturebias.domain.model_options import AutoBatch

if TYPE_CHECKING:
    from culturebias.adapters.hf.loading import ModelSource


@dataclass
class OnnxModel:
    """A loaded ONNX model: the session facade, tokenizer, where it runs, and who it is."""

    model: Any  # OrtCausalLM or OrtMaskedLM
    tokenizer: Any  # Any: a transformers tokenizer
    device: str  # the onnxruntime device: "cpu" or "cuda:N"
    source: ModelSource
    identity: ModelIdentity


def settled_options(loaded: OnnxModel, options: LocalModelOptions) -> LocalModelOptions:
    """``options`` with model.batch_size=auto resolved for the session's device (the number used is the number recorded)."""
    if not isinstance(options.batch_size, AutoBatch):
        return options
    from culturebias.adapters.hf.batch_size import auto_batch_size

    found = auto_batch_size(loaded.model, loaded.device, options.batch_size, max_length=options.max_length, inputs_on="cpu")
    return options.model_copy(update={"batch_size": found})
