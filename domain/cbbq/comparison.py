"""CBBQ across models: the models × categories table of bias scores (paper Fig. 5) and each model's breakdowns.

Every cell is a ``CBBQScores`` block exactly as the run's summary holds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from culturebias.domain.cbbq.summary import CBBQConditionBlock, CBBQScores, CBBQSummary, Weights
from culturebias.domain.comparison.envelope import Comparison
from culturebias.domain.summary import Block

HEATMAP_METRICS = ("s_amb", "s_dis", "s_total")


class CBBQComparisonBody(Block):
    categories: list[str]  # every category of any run, sorted
    condition: dict[str, str]  # model → the headline condition's name
    weights: dict[str, Weights]
    overall: dict[str, CBBQScores]  # model → headline scores
    by_category: dict[str, dict[str, CBBQScores]]  # model → category → scores (the heat map's rows)
    by_condition: dict[str, dict[str, CBBQConditionBlock]]  # model → condition → overall and per category


class CBBQComparison(Comparison[CBBQComparisonBody]):
    benchmark: Literal["cbbq"] = "cbbq"


def compare_cbbq(labels: Sequence[str], summaries: Sequence[CBBQSummary]) -> tuple[CBBQComparisonBody, list[str]]:
    notes = []
    conditions = {s.metrics.condition for s in summaries}
    if len(conditions) > 1:
        notes.append(
            "the headline conditions differ: "
            + ", ".join(f"{name}: {s.metrics.condition_name}" for name, s in zip(labels, summaries))
        )
    weights = {(s.metrics.weights.w1, s.metrics.weights.w2) for s in summaries}
    if len(weights) > 1:
        notes.append(
            "S_total weights differ: "
            + ", ".join(f"{name}: w1={s.metrics.weights.w1}, w2={s.metrics.weights.w2}" for name, s in zip(labels, summaries))
        )
    if len({s.metrics.overall_aggregate for s in summaries}) > 1:
        notes.append(
            "the overall scores are aggregated differently (category_mean: the mean over categories; pooled: all "
            "items): " + ", ".join(f"{name}: {s.metrics.overall_aggregate}" for name, s in zip(labels, summaries))
        )
    category_sets = [set(s.metrics.by_category) for s in summaries]
    categories = sorted(set.union(*category_sets))
    if any(c != set(categories) for c in category_sets):
        notes.append("not every run covers every category: a missing cell is empty")
    body = CBBQComparisonBody(
        categories=categories,
        condition={name: s.metrics.condition_name for name, s in zip(labels, summaries)},
        weights={name: s.metrics.weights for name, s in zip(labels, summaries)},
        overall={name: s.metrics.overall for name, s in zip(labels, summaries)},
        by_category={name: dict(s.metrics.by_category) for name, s in zip(labels, summaries)},
        by_condition={name: dict(s.metrics.by_condition) for name, s in zip(labels, summaries)},
    )
    return body, notes
