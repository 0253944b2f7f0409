"""CBBQ metrics of a run: overall and per category, for each prompt condition."""

from __future__ import annotations

from typing import Sequence

from culturebias.domain.bbq.aggregate import group_by, nan_mean
from culturebias.domain.bbq.cbbq_metrics import CBBQ_METRICS, cbbq_scores, count_answers
from culturebias.domain.bbq.model import Answer


def scores_with_counts(answers: Sequence[Answer], w1: float, w2: float) -> dict:
    counts = count_answers(answers)
    return {**cbbq_scores(counts, w1, w2), "counts": counts.as_dict()}


def condition_block(answers: Sequence[Answer], w1: float, w2: float, overall: str) -> dict:
    by_category = {
        category: scores_with_counts(group, w1, w2)
        for category, group in sorted(group_by(answers, lambda a: a.item.category).items())
    }
    if overall == "category_mean":
        pooled = scores_with_counts(answers, w1, w2)
        total = {m: nan_mean(c[m] for c in by_category.values()) for m in CBBQ_METRICS}
        total["counts"] = pooled["counts"]
    else:
        total = scores_with_counts(answers, w1, w2)
    return {"overall": total, "by_category": by_category}
