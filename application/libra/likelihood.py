"""L of a sentence with a modified span (PROTOCOLS §4), in one batched call per set of sentences.

A sentence is ``U_left + modified + U_right``; the modified span is ω, M_p or M_u
for a triplet, the filled-in BLANK (or the whole continuation sentence) for StereoSet.

- causal: ``log p(modified + U_right | U_left)``;
- masked_sum: pseudo-log-likelihood summed over the tokens of ``modified + U_right``;
- masked_stereoset_mean: StereoSet's ``(1/|M|) Σ_{t∈M} log P(t | U)``, the mean over the
  tokens of the modified span. Each token is masked alone (the pseudo-log-likelihood
  port), so the span's other tokens are visible while one is predicted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from culturebias.application.context import RunContext
from culturebias.domain.libra.options import LibraOptions
from culturebias.domain.libra.summary import LikelihoodKind, ModelType
from culturebias.domain.requests import LoglikelihoodRequest, PseudoLoglikelihoodRequest

DESCRIPTIONS: dict[LikelihoodKind, str] = {
    "causal": "causal log-likelihood log p(ω + U_right | U_left)",
    "masked_sum": "masked-LM pseudo-log-likelihood summed over the tokens of ω + U_right",
    "masked_stereoset_mean": "masked-LM mean log P(t | U) over the tokens of the modified span (StereoSet)",
}


@dataclass(frozen=True, slots=True)
class SpanSentence:
    text: str
    start: int  # where the modified span starts: len(U_left)
    end: int  # where it ends: U_right follows


def likelihood_kind(model_type: ModelType, options: LibraOptions) -> LikelihoodKind:
    if model_type == "causal":
        return "causal"
    return "masked_stereoset_mean" if options.masked_likelihood == "stereoset_mean" else "masked_sum"


def score_sentences(
    ctx: RunContext, kind: LikelihoodKind, sentences: Sequence[SpanSentence], description: str
) -> tuple[list[float], list[bool]]:
    """L per sentence, and whether each got no valid score (a backend that gave up, or a span without tokens)."""
    if kind == "causal":
        requests = [LoglikelihoodRequest(context=s.text[: s.start], continuation=s.text[s.start :]) for s in sentences]
        results = ctx.scorer().loglikelihood(requests, description=description)
        return [r.logprob for r in results], [r.invalid for r in results]
    end = (lambda s: s.end) if kind == "masked_stereoset_mean" else (lambda s: len(s.text))
    masked = ctx.pseudo_scorer().pseudo_loglikelihood(
        [PseudoLoglikelihoodRequest(s.text, s.start, end(s)) for s in sentences], description=description
    )
    if kind == "masked_sum":
        return [r.logprob for r in masked], [not math.isfinite(r.logprob) for r in masked]
    values = [r.logprob / r.n_tokens if r.n_tokens else float("nan") for r in masked]
    return values, [not math.isfinite(v) for v in values]
