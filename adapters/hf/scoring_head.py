"""From a forward pass's output to the log-probability of chosen next tokens.

The scorer needs, for each scored token, ``log p(token | its predecessors)`` and
whether the token was the greedy argmax, and nothing else of the vocabulary.
Two heads give those numbers on torch:

- ``LogitsHead`` takes the model's logits as transformers returns them: the
  whole ``[batch, length, vocab]`` tensor is built (half a gigabyte for a
  batch of 2,500 tokens and a 50k vocabulary) and read several times.
- ``SplitHead`` runs the decoder alone and applies the output embedding itself,
  to the positions that predict a scored token only, a few dozen positions at a
  time into one reused buffer that stays in the CPU cache. It is used only where
  the model's logits are exactly ``lm_head(last_hidden_state)``: a probe on a
  short input checks that when the scorer is built (a soft-capped or scaled head
  falls back to ``LogitsHead``).

Both run the forward pass themselves (``score``), given the flat "parent"
positions (row * width + column) and target token ids, and return the float64
log-probabilities and greedy flags; the scorer sums them per request. A backend
whose model object offers ``scoring_head()`` (the onnx facade: the head inside
its graph) supplies its own.
"""

from __future__ import annotations

import inspect
from typing import Any

from culturebias.logs import get_logger

log = get_logger("culturebias.hf")

# Logits held at once by the split head (elements): 4 Mi float32 = 16 MiB, inside a server CPU's L3 cache.
CHUNK_ELEMENTS = 2**22


def node_scores(logits, parents, targets):
    """(log-probabilities float64, greedy flags) of ``targets`` predicted at rows ``parents`` of 2-D ``logits``."""
    import torch

    needed, local = torch.unique(parents, return_inverse=True)
    return _reduce(logits[needed].float(), local, targets)  # indexing copies: ``logits`` stays intact


def _reduce(logits, rows, targets):
    """Log-softmax at (``rows``, ``targets``) of float32 ``logits`` and greedy flags; overwrites ``logits``."""
    picked = logits[rows, targets]
    top = logits.max(dim=-1).values
    lse = top + logits.sub_(top[:, None]).exp_().sum(dim=-1).log()
    return (picked - lse[rows]).double(), picked >= top[rows]


class LogitsHead:
    """The model computes the logits, only from the earliest predicting position on where it can."""

    split = False

    def __init__(self, model: Any):  # Any: a transformers model
        self._model = model
        self._keeps = "logits_to_keep" in inspect.signature(model.forward).parameters

    def prefix(self, **kwargs: Any):  # Any: the model's forward arguments
        """The key/value cache of a forward pass whose output is not needed."""
        if self._keeps:
            kwargs["logits_to_keep"] = 1
        return self._model(**kwargs).past_key_values

    def score(self, parents, targets, **kwargs: Any):  # Any: the model's forward arguments
        """(float64 log-probabilities, greedy flags) of ``targets`` predicted at flat positions ``parents``."""
        width = kwargs["input_ids"].shape[1]
        kept = width
        if self._keeps and len(parents):
            kept = width - int((parents % width).min())
            kwargs["logits_to_keep"] = kept
        logits = self._model(**kwargs).logits
        rows = (parents // width) * kept + (parents % width) - (width - kept)
        return node_scores(logits.reshape(-1, logits.shape[-1]), rows, targets)


class SplitHead:
    """The decoder computes hidden states; the output embedding is applied chunk by chunk to the needed positions."""

    split = True

    def __init__(self, model: Any, decoder: Any, embedding: Any):  # Any: a transformers model
        self._model = model
        self._decoder = decoder
        self._weight = embedding.weight
        self._bias = embedding.bias
        self._chunk = max(1, CHUNK_ELEMENTS // self._weight.shape[0])

    def prefix(self, **kwargs: Any):  # Any: the model's forward arguments
        return self._decoder(**kwargs).past_key_values

    def score(self, parents, targets, **kwargs: Any):  # Any: the model's forward arguments
        import torch

        hidden = self._decoder(**kwargs).last_hidden_state
        hidden = hidden.reshape(-1, hidden.shape[-1])
        order = torch.argsort(parents, stable=True)
        parents, targets = parents[order], targets[order]
        needed, counts = torch.unique_consecutive(parents, return_counts=True)
        ends = torch.cumsum(counts, 0).tolist()
        states = hidden[needed]
        logprobs = torch.empty(len(parents), dtype=torch.float64, device=hidden.device)
        greedy = torch.empty(len(parents), dtype=torch.bool, device=hidden.device)
        in_place = self._weight.dtype == torch.float32
        buffer = torch.empty((self._chunk, self._weight.shape[0]), dtype=torch.float32, device=hidden.device) if in_place else None
        local = torch.repeat_interleave(torch.arange(len(needed), device=hidden.device), counts)
        for first in range(0, len(needed), self._chunk):
            last = min(first + self._chunk, len(needed))
            lo = ends[first - 1] if first else 0
            hi = ends[last - 1]
            block = states[first:last]
            if buffer is not None:  # in place
                logits = buffer[: last - first]
                if self._bias is None:
                    torch.mm(block, self._weight.t(), out=logits)
                else:
                    torch.addmm(self._bias, block, self._weight.t(), out=logits)
            else:
                logits = torch.nn.functional.linear(block, self._weight, self._bias).float()
            logprobs[lo:hi], greedy[lo:hi] = _reduce(logits, local[lo:hi] - first, targets[lo:hi])
        restore = torch.empty_like(order)
        restore[order] = torch.arange(len(order), device=order.device)
        return logprobs[restore], greedy[restore]


def scoring_head(model: Any, allow_split: bool = True):  # Any: a transformers model
    """The model's own head if it has one, else ``SplitHead`` where the probe shows the logits are
    the output embedding of the decoder's states, else ``LogitsHead``."""
    own = getattr(model, "scoring_head", None)
    if own is not None:
        head = own(allow_split)
        if head is not None:
            return head
    if allow_split:
        split = _probe_split(model)
        if split is not None:
            return split
    return LogitsHead(model)


def _probe_split(model: Any) -> SplitHead | None:  # Any: a transformers model
    import torch

    try:
        decoder = model.get_decoder()
        embedding = model.get_output_embeddings()
    except Exception:  # noqa: BLE001 - any model without the accessors keeps the plain head
        return None
    if decoder is None or decoder is model or not isinstance(embedding, torch.nn.Linear):
        return None
    vocab = int(embedding.weight.shape[0])
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(0, vocab, (1, 6), generator=generator).to(embedding.weight.device)
    mask = torch.ones_like(ids)
    try:
        with torch.inference_mode():
            want = model(input_ids=ids, attention_mask=mask).logits.float()
            got = embedding(decoder(input_ids=ids, attention_mask=mask).last_hidden_state).float()
    except Exception as error:  # noqa: BLE001
        log.debug("split scoring head unavailable", reason=str(error))
        return None
    scale = float(want.abs().max()) or 1.0
    if got.shape != want.shape or float((got - want).abs().max()) > 1e-5 * scale:
        log.info("model post-processes its logits: scoring from the full logits", architecture=type(model).__name__)
        return None
    return SplitHead(model, decoder, embedding)
