"""The paired difference of every two compared runs on every headline (comparison.json ``headline_pairs``).

A benchmark whose descriptor declares ``unit_values`` gives each run's per-unit values of a
headline from its stored item records; the pair is then bootstrapped over the units both runs
share. Where that is not possible (no declaration, no records at hand, a statistic that does not
reproduce the reported value) the pair carries its point difference and says why it was not tested.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any

from culturebias.domain.comparison.headline_pairs import HeadlinePair, paired_pair, untested_pair
from culturebias.domain.headlines import HeadlineMetric, value_of
from culturebias.domain.policy.paired import NoUnitValues, UnitValues, UnitValuesOf, reproduces
from culturebias.domain.summary import RunSummary
from culturebias.domain.validity import failed_rules, headline_not_measured

# run id → that run's stored item records, or None
RecordsOf = Callable[[str], Sequence[Any] | None]


def _units(
    unit_values: UnitValuesOf, summary: RunSummary, records: Sequence[Any] | None, metric: HeadlineMetric, label: str  # Any: ItemRecords or their JSON
) -> UnitValues | str:
    try:
        found = unit_values(summary, records, metric, None)
    except NoUnitValues as missing:
        return f"{label}: {missing.reason}"
    mismatch = reproduces(found, _value(summary, metric))
    return f"{label}: {mismatch}" if mismatch is not None else found


def _value(summary: RunSummary, metric: HeadlineMetric) -> float | None:
    try:
        return value_of(summary, metric)
    except KeyError:
        return None


def headline_pairs(
    labels: Sequence[str],
    summaries: Sequence[RunSummary],
    metrics: Sequence[HeadlineMetric],
    unit_values: UnitValuesOf | None,
    records: RecordsOf | None,
) -> list[HeadlinePair]:
    """Every pair of runs (in run order) on every headline metric."""
    held = {s.run_id: records(s.run_id) if records is not None else None for s in summaries}
    pairs = []
    for metric in metrics:
        units: dict[str, UnitValues | str] = {}
        for label, summary in zip(labels, summaries):
            if (invalid := headline_not_measured(summary, metric.name)) is not None and summary.not_measured is None:
                units[label] = f"{label}'s {metric.name} is not measured ({invalid})"
            elif unit_values is None:
                units[label] = "the benchmark declares no per-unit values of its headlines"
            else:
                units[label] = _units(unit_values, summary, held[summary.run_id], metric, label)
        values = {label: None if failed_rules(s, metric.name) else _value(s, metric) for label, s in zip(labels, summaries)}
        for a, b in combinations(labels, 2):
            ua, ub = units[a], units[b]
            if isinstance(ua, UnitValues) and isinstance(ub, UnitValues):
                pairs.append(paired_pair(metric, (a, b), (ua, ub)))
            else:
                why = ua if isinstance(ua, str) else ub
                pairs.append(untested_pair(metric, (a, b), (values[a], values[b]), f"not tested: {why}"))
    return pairs
