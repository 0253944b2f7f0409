"""CBBQ metrics of a run's answers under one prompt condition: overall and per category."""

from __future__ import annotations

from typing import Sequence

from culturebias.domain.bbq.aggregate import group_by, nan_mean
from culturebias.domain.cbbq.breakdown import group_topic_scores
from culturebias.domain.cbbq.metrics import CBBQ_METRICS, cbbq_scores, count_answers
from culturebias.domain.bbq.model import Answer
from culturebias.domain.cbbq.options import CBBQOverall
from culturebias.domain.cbbq.summary import CBBQAnswerCounts, CBBQConditionBlock, CBBQScores


def _scored(answers: Sequence[Answer], w1: float, w2: float) -> tuple[dict[str, float], CBBQAnswerCounts]:
    counts = count_answers(answers)
    return cbbq_scores(counts, w1, w2), counts


def condition_block(answers: Sequence[Answer], w1: float, w2: float, overall: CBBQOverall) -> CBBQConditionBlock:
    categories = {
        category: _scored(group, w1, w2)
        for category, group in sorted(group_by(answers, lambda a: a.item.category).items())
    }
    pooled_scores, pooled_counts = _scored(answers, w1, w2)
    if overall == "category_mean":
        # NaN (undefined) category scores are left out of the mean; the counts stay pooled.
        total = {m: nan_mean(scores[m] for scores, _ in categories.values()) for m in CBBQ_METRICS}
    else:
        total = pooled_scores
    return CBBQConditionBlock(
        overall=CBBQScores(**total, counts=pooled_counts),
        by_category={category: CBBQScores(**scores, counts=counts) for category, (scores, counts) in categories.items()},
        by_group_topic=group_topic_scores(answers, w1, w2),
    )
