"""KoBBQ's per-template values of a headline, for the paired baseline test (descriptor ``unit_values``).

Rebuilt from the run's stored item records: each answer's template, prompt,
context and answer class give the template's tallies per prompt, from which
the statistic of ``domain/bbq/intervals.py`` recomputes the headline exactly
as the run's aggregate did (pooled or per template). A category or label
breakdown keeps that category's or label type's templates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from culturebias.domain.bbq.intervals import KOBBQ_HEADLINES, KOBBQ_TALLIES, UNIT, KoBBQRow, kobbq_statistic, kobbq_tallies
from culturebias.domain.bbq.units import bbq_records
from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.bbq.evaluators import SWAPPED, template_version
from culturebias.domain.policy.paired import NoUnitValues, UnitValues

# breakdown kind → the record's metadata field that holds it
BREAKDOWN_FIELDS = {"category": "category", "label": "label_type"}


def _row(record: Any, evaluator: str) -> KoBBQRow:  # Any: ItemRecords or their JSON
    meta = record.metadata
    outcome = str(record.outcome)
    if meta.get("context_condition") == "ambiguous":
        context = "a"
    else:
        context = "b" if meta.get("context_polarity") == "biased" else "c"
        d = context == "b" and template_version(str(meta.get("sample_id", ""))) == "d"
        if evaluator == "KoBBQ_evaluation" and d:  # as domain/bbq/evaluators.py's evaluator_context
            context, outcome = "c", SWAPPED.get(outcome, outcome)
    return str(meta["template_id"]), str(meta["prompt_id"]), context, outcome


def kobbq_unit_values(summary: Any, records: Sequence[Any] | None, metric: HeadlineMetric, breakdown: str | None) -> UnitValues:  # Any: the benchmark's own RunSummary subclass
    if metric.name not in KOBBQ_HEADLINES:
        raise NoUnitValues(f"KoBBQ keeps per-template values of {', '.join(KOBBQ_HEADLINES)} only")
    evaluator = getattr(summary.metrics, "evaluator", "5_evaluation")
    rows = [_row(r, evaluator) for r in bbq_records(records, breakdown, BREAKDOWN_FIELDS)]
    templates, tallies = kobbq_tallies(rows, summary.metrics.prompts)
    statistic = kobbq_statistic(summary.metrics.aggregate, (metric.name,))
    weights = None if summary.metrics.aggregate == "per_template" else _weights(tallies, metric.name)
    return UnitValues(UNIT, tuple(templates), tallies, lambda chosen: statistic(chosen)[0], weights)


def _weights(tallies: np.ndarray, metric: str) -> np.ndarray:
    """A template's weight in the pooled headline: its answers in the metric's denominator (mean over prompts).

    Exact where a template has as many such answers under every prompt (no out-of-choice reply shifts them)
    and, for diff_bias_dis, as many biased as counter-biased ones; the caller checks that the weighted mean
    of the templates' own values reproduces the headline."""
    n = {name: tallies[..., i] for i, name in enumerate(KOBBQ_TALLIES)}
    denominator = {"acc_amb": n["n_a"], "diff_bias_amb": n["n_a"], "acc_dis": n["n_b"] + n["n_c"], "diff_bias_dis": n["n_b"]}
    return np.asarray(denominator[metric].mean(axis=-1), dtype=float)
