"""Seeded sampling for the hf (and onnx) generator: one random stream per request.

transformers samples a whole batch from torch's global generator, so a request's
reply would depend on which requests share its batch. Here sampling happens in a
logits processor instead: each row draws from its own ``torch.Generator``, seeded
from the request's seed and its prompt tokens, and turns the scores into a one-hot
choice that greedy decoding then takes.

What is guaranteed: a request's random draws depend on (seed, prompt) alone, never
on the other requests of its batch, their order, the batch size or an interrupted
and resumed run. Its reply is therefore identical wherever the model's scores are:
on one device and dtype, batches of other shapes change the scores only by float
rounding (padding), which can move a draw only where it falls within that rounding
of a boundary between two tokens' cumulative probabilities.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Sequence

from culturebias.domain.requests import GenerationParams

# transformers' own defaults, for a generation_config that does not set a value.
_FALLBACK = {"do_sample": False, "temperature": 1.0, "top_p": 1.0, "top_k": 50, "repetition_penalty": 1.0}


@dataclass(frozen=True)
class ResolvedSampling:
    temperature: float
    top_p: float
    top_k: int  # 0: off
    repetition_penalty: float


def _model_value(generation_config: Any, name: str) -> Any:  # Any: transformers' GenerationConfig and its values
    value = getattr(generation_config, name, None)
    return _FALLBACK[name] if value is None else value


def resolve_sampling(params: GenerationParams, generation_config: Any) -> ResolvedSampling | None:  # Any: transformers' GenerationConfig
    """The values a request samples with (unset ones the model's own), or None when it decodes greedily."""
    mode = params.mode
    if mode == "greedy":
        return None
    if mode == "model" and params.temperature is None and not _model_value(generation_config, "do_sample"):
        return None  # the model's own decoding is greedy

    def pick(name: str) -> Any:  # Any: a GenerationConfig value
        given = getattr(params, name)
        return _model_value(generation_config, name) if given is None else given

    temperature = float(pick("temperature"))
    if temperature <= 0:
        return None
    return ResolvedSampling(
        temperature=temperature,
        top_p=float(pick("top_p")),
        top_k=int(pick("top_k") or 0),
        repetition_penalty=float(pick("repetition_penalty")),
    )


def request_seed(seed: int, prompt: Sequence[int], params: GenerationParams) -> int:
    """A 63-bit seed from the sampling seed, the prompt's tokens and the decoding values."""
    text = repr((seed, list(prompt), params.key_fields()))
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") >> 1


def seeded_sampler(sampling: ResolvedSampling, seeds: Sequence[int]) -> Any:  # Any: a transformers LogitsProcessor
    """A logits processor that samples each row from its own generator (transformers' warpers, its order)."""
    import torch
    from transformers.generation.logits_process import (
        LogitsProcessor,
        RepetitionPenaltyLogitsProcessor,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    steps: list[Any] = []  # Any: transformers logits processors
    if sampling.repetition_penalty != 1.0:
        steps.append(RepetitionPenaltyLogitsProcessor(sampling.repetition_penalty))
    if sampling.temperature != 1.0:
        steps.append(TemperatureLogitsWarper(sampling.temperature))
    if sampling.top_k > 0:
        steps.append(TopKLogitsWarper(sampling.top_k))
    if sampling.top_p < 1.0:
        steps.append(TopPLogitsWarper(sampling.top_p))

    class SeededSampler(LogitsProcessor):
        def __init__(self) -> None:
            self._generators: list[Any] = []  # Any: torch.Generator (torch is imported lazily)

        def __call__(self, input_ids: Any, scores: Any) -> Any:  # Any: torch tensors (torch is imported lazily)
            if not self._generators:
                self._generators = [torch.Generator(device=scores.device).manual_seed(s) for s in seeds]
            scores = scores.float()
            for step in steps:
                scores = step(input_ids, scores)
            probabilities = torch.softmax(scores, dim=-1)
            chosen = torch.stack(
                [torch.multinomial(probabilities[row], 1, generator=g) for row, g in enumerate(self._generators)]
            )
            onehot = torch.full_like(scores, float("-inf"))
            return onehot.scatter_(1, chosen, 0.0)

    return SeededSampler()
