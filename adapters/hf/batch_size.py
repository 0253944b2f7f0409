"""``model.batch_size=auto``: the largest batch that fits, found as lm-evaluation-harness finds it.

On an accelerator, a forward pass of ``AutoBatch.start`` sequences of the probe length
runs once the model is loaded; on out-of-memory the batch halves until one fits.
The probe runs what the scorer's prefix passes and the generator's prompt pass
run (decoder states, the key/value cache, the last position's logits); the
scorer's continuation passes are bounded by a token budget of their own. The
probe length is ``model.max_length``, else the model's window up to
``PROBE_TOKENS`` (lm-evaluation-harness's default ``max_length``).

On the CPU nothing is probed: an allocation that does not fit there ends the
process (the kernel's OOM killer) rather than raising, and larger batches
barely speed up CPU inference. ``AutoBatch.cpu`` is used.
"""

from __future__ import annotations

import gc
import inspect
from typing import Any, Callable

from culturebias.domain.errors import ModelLoadError
from culturebias.domain.model_options import AutoBatch
from culturebias.logs import get_logger

log = get_logger("culturebias.hf")

PROBE_TOKENS = 2048


def is_out_of_memory(error: BaseException) -> bool:
    """torch's CUDA/MPS out-of-memory errors, a failed CPU allocation, or ONNX Runtime's failed allocation."""
    if isinstance(error, MemoryError):
        return True
    text = str(error).lower()
    if type(error).__name__ == "OutOfMemoryError":  # torch.cuda.OutOfMemoryError, without importing torch
        return True
    return any(marker in text for marker in ("out of memory", "can't allocate memory", "failed to allocate memory"))


def largest_fitting(fits: Callable[[int], None], start: int) -> int:
    """The first of ``start``, ``start // 2``, ... 1 for which ``fits(batch)`` raises no out-of-memory error."""
    batch = max(1, start)
    while True:
        try:
            fits(batch)
            return batch
        except Exception as error:
            if not is_out_of_memory(error):
                raise
            if batch == 1:
                raise ModelLoadError(f"model.batch_size=auto: not even one sequence fits ({error})") from None
            log.info("batch does not fit; halving", batch_size=batch)
            batch //= 2


def probe_length(model: Any, max_length: int | None) -> int:  # Any: a transformers model or the ONNX facade
    if max_length:
        return max_length
    config = getattr(model, "config", None)
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return min(value, PROBE_TOKENS)
    return PROBE_TOKENS


def _forward(model: Any, inputs_on: str, batch: int, length: int) -> None:  # Any: a transformers model or the ONNX facade
    import torch

    ids = torch.zeros((batch, length), dtype=torch.long, device=inputs_on)
    kwargs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}  # Any: the model's forward arguments
    forward = getattr(model, "forward", None)
    if forward is not None and "logits_to_keep" in inspect.signature(forward).parameters:
        kwargs["logits_to_keep"] = 1
    try:
        with torch.inference_mode():
            model(**kwargs)
    finally:
        del ids, kwargs
        gc.collect()
        if inputs_on.startswith("cuda"):
            torch.cuda.empty_cache()


def auto_batch_size(
    model: Any, device: str, policy: AutoBatch = AutoBatch(), *, max_length: int | None = None, inputs_on: str | None = None  # Any: a transformers model or the ONNX facade
) -> int:
    """The batch size the ``model.batch_size=auto`` policy settles to with ``model`` running on ``device``.

    ``inputs_on``: where the probe's input tensors go when that is not ``device``
    (an ONNX Runtime session on CUDA takes CPU tensors).
    """
    if device == "cpu":
        log.info("batch size chosen", requested="auto", batch_size=policy.cpu, device=device, probed=False)
        return policy.cpu
    length = probe_length(model, max_length)
    try:
        chosen = largest_fitting(lambda batch: _forward(model, inputs_on or device, batch, length), policy.start)
    except ModelLoadError as error:
        raise ModelLoadError(f"{error}: {length} tokens on {device}; set model.max_length lower, or a batch size") from None
    log.info("batch size chosen", requested="auto", batch_size=chosen, device=device, probe_tokens=length)
    return chosen
