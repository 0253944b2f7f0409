"""The CBBQ headline intervals set on a score block (the resampling: domain/bbq/intervals.py)."""

from __future__ import annotations

from typing import Sequence

from culturebias.domain.bbq.intervals import CBBQ_HEADLINES, cbbq_intervals
from culturebias.domain.bbq.model import Answer
from culturebias.domain.cbbq.summary import CBBQScores


def attach_cbbq(scores: CBBQScores, answers: Sequence[Answer], w1: float, w2: float, overall: str, *, seed: int, resamples: int) -> None:
    """Set ``scores.intervals`` (the overall ``CBBQScores`` of these answers); nothing with ``resamples`` 0."""
    if resamples > 0:
        points = {m: getattr(scores, m) for m in CBBQ_HEADLINES}
        scores.intervals = cbbq_intervals(answers, w1, w2, overall, points, seed=seed, resamples=resamples)
