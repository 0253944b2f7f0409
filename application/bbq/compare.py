"""Comparing two KoBBQ-style runs: Wilcoxon rank-sum of their per-template scores.

The KoBBQ paper compares KoBBQ with a machine-translated BBQ this way. Each
run's summary keeps ``details.template_scores`` (every template's scores,
mean over prompts); this compares one metric's two samples. A summary.json
on disk is read with ``parse_summary(KoBBQSummary, json.loads(text), path)``.
"""

from __future__ import annotations

from typing import Any

from culturebias.domain.bbq.kobbq_metrics import KOBBQ_METRICS
from culturebias.domain.bbq.statistics import rank_sum
from culturebias.domain.bbq.summary import KoBBQSummary
from culturebias.domain.errors import ConfigError


def template_sample(summary: KoBBQSummary, metric: str) -> list[float]:
    scores = summary.details.template_scores
    if not scores:
        raise ConfigError(f"summary of run {summary.run_id} holds no details.template_scores")
    return [value for values in scores.values() if (value := getattr(values, metric)) is not None]


def compare_runs(summary_a: KoBBQSummary, summary_b: KoBBQSummary, metric: str = "diff_bias_amb") -> dict[str, Any]:
    """Rank-sum test of ``metric`` between two runs' per-template scores (two-sided)."""
    if metric not in KOBBQ_METRICS:
        raise ConfigError(f"metric must be one of {list(KOBBQ_METRICS)}, got {metric!r}")
    result = rank_sum(template_sample(summary_a, metric), template_sample(summary_b, metric))
    return {
        "metric": metric,
        "run_a": summary_a.run_id,
        "run_b": summary_b.run_id,
        "test": "Wilcoxon rank-sum, two-sided",
        **(result.as_dict() if result else {"statistic": None, "p_value": None, "n_a": 0, "n_b": 0}),
    }
