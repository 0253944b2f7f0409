"""The CBBQ headline intervals set on score blocks: the overall one and each category's
(the resampling: domain/bbq/intervals.py; a category resamples its own templates)."""

from __future__ import annotations

from typing import Sequence

from culturebias.domain.bbq.aggregate import group_by
from culturebias.domain.bbq.intervals import CBBQ_HEADLINES, cbbq_intervals
from culturebias.domain.bbq.model import Answer
from culturebias.domain.cbbq.summary import CBBQConditionBlock, CBBQScores


def attach_cbbq(scores: CBBQScores, answers: Sequence[Answer], w1: float, w2: float, overall: str, *, seed: int, resamples: int) -> None:
    """Set ``scores.intervals`` (a ``CBBQScores`` of these answers); nothing with ``resamples`` 0."""
    if resamples > 0:
        points = {m: getattr(scores, m) for m in CBBQ_HEADLINES}
        scores.intervals = cbbq_intervals(answers, w1, w2, overall, points, seed=seed, resamples=resamples)


def attach_cbbq_condition(
    block: CBBQConditionBlock, answers: Sequence[Answer], w1: float, w2: float, overall: str, *, seed: int, resamples: int
) -> None:
    """Intervals on a condition's overall scores and on each of its categories' (one category: pooled)."""
    attach_cbbq(block.overall, answers, w1, w2, overall, seed=seed, resamples=resamples)
    by_category = group_by(answers, lambda a: a.item.category)
    for category, scores in block.by_category.items():
        attach_cbbq(scores, by_category.get(category, []), w1, w2, "pooled", seed=seed, resamples=resamples)
