"""CBBQ's per-template values of a headline, for the paired baseline test (descriptor ``unit_values``).

Rebuilt from the run's stored item records of the headline condition: each
answer's template, category, context and answer class give the template's
tallies, from which the statistic of ``domain/bbq/intervals.py`` recomputes
S_amb, S_dis and S_total as the run did (pooled, or the mean over categories).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from culturebias.domain.bbq.intervals import CBBQ_HEADLINES, UNIT, cbbq_statistic, cbbq_tallies, with_categories
from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.bbq.units import bbq_records
from culturebias.domain.policy.paired import NoUnitValues, UnitValues

BREAKDOWN_FIELDS = {"category": "category"}


def cbbq_unit_values(summary: Any, records: Sequence[Any] | None, metric: HeadlineMetric, breakdown: str | None) -> UnitValues:  # Any: the benchmark's own RunSummary subclass
    if metric.name not in CBBQ_HEADLINES:
        raise NoUnitValues(f"CBBQ keeps per-template values of {', '.join(CBBQ_HEADLINES)} only")
    condition = summary.metrics.condition
    rows = [
        (str(r.metadata["template_id"]), str(r.metadata["category"]), r.metadata.get("context_condition") == "ambiguous", str(r.outcome))
        for r in bbq_records(records, breakdown, BREAKDOWN_FIELDS)
        if r.metadata.get("prompt_id") == condition and r.metadata.get("biased_index") is not None
    ]
    if not rows:
        raise NoUnitValues(f"the run's item records hold no answer of the headline condition {condition!r}")
    templates, tallies, codes = cbbq_tallies(rows)
    weights = summary.metrics.weights
    statistic = cbbq_statistic(summary.metrics.overall_aggregate, weights.w1, weights.w2, (metric.name,))
    return UnitValues(UNIT, tuple(templates), with_categories(tallies, codes), lambda chosen: statistic(chosen)[0])
