"""Each pair of compared runs and the ranking, in plain words (comparison.md and comparison.html share them)."""

from __future__ import annotations

from typing import Any

from culturebias.domain.comparison.envelope import Comparison
from culturebias.domain.comparison.headline_pairs import HeadlinePair, ranking
from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.uncertainty.interval import plural_unit


def number(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "–"
    shown = f"{value:+.3f}" if signed else f"{value:.3f}"
    return shown.replace("-", "−")


def metric_values(comparison: Comparison[Any], metric: HeadlineMetric) -> dict[str, float | None]:  # Any: a comparison of any benchmark
    return {label: (e.value if (e := comparison.headlines.get(label, {}).get(metric.name)) else None) for label in comparison.labels()}


def _p(p_value: float) -> str:
    return "p < 0.001" if p_value < 0.001 else f"p = {p_value:.3f}"


def shown_difference(metric: HeadlineMetric, pair: HeadlinePair) -> tuple[str, float | None, float | None, float | None]:
    """(what the number is, the difference, low, high) in the metric's own terms."""
    if metric.direction == "higher":  # the stored difference is of -value: turn it back
        flip = [None if v is None else -v for v in (pair.difference, pair.high, pair.low)]
        return f"{pair.b} minus {pair.a}", flip[0], flip[1], flip[2]
    what = f"{pair.b} minus {pair.a}" if metric.direction == "lower" else f"distance from {metric.target:g}, {pair.b} minus {pair.a}"
    return what, pair.difference, pair.low, pair.high


def pair_sentence(metric: HeadlineMetric, pair: HeadlinePair) -> str:
    what, difference, low, high = shown_difference(metric, pair)
    if pair.difference is None:
        return f"{pair.b} and {pair.a} on {metric.label}: no difference can be taken ({pair.note or 'a value is undefined'})."
    amount = f"{number(difference, signed=True)} ({what}"
    if pair.p_value is None:
        return (
            f"{pair.b} {'does better' if pair.difference < 0 else 'does worse' if pair.difference > 0 else 'does the same'} "
            f"than {pair.a} on {metric.label}: {amount}); {pair.note or 'not tested'}."
        )
    units = plural_unit(pair.unit or "unit", pair.n or 0)
    tested = f"{amount}; 95% CI {number(low, True)} to {number(high, True)}, {_p(pair.p_value)}, paired over {pair.n:,} {units})"
    if not pair.significant:
        return f"{pair.b} and {pair.a} do not differ significantly on {metric.label}: {tested}."
    verb = "does better" if pair.difference < 0 else "does worse"
    return f"{pair.b} {verb} than {pair.a} on {metric.label} ({metric.direction_words()}): {tested}."


def ranking_words(comparison: Comparison[Any], metric: HeadlineMetric) -> str:  # Any: a comparison of any benchmark
    """``B = C > A``: best first, "=" between runs whose paired difference is not significant."""
    tiers = ranking(metric, metric_values(comparison, metric), comparison.headline_pairs)
    return " > ".join(" = ".join(tier) for tier in tiers)


def answer_section(comparison: Comparison[Any]) -> str:  # Any: a comparison of any benchmark
    """comparison.md's first section: the ranking on each headline and each pair in words."""
    metrics = {m.name: m for m in comparison.headline_metrics}
    if not metrics:
        return ""
    ranks = [f"- {m.label} ({m.direction_words()}): {ranking_words(comparison, m)}" for m in metrics.values()]
    pairs = [f"- {pair_sentence(metrics[p.metric], p)}" for p in comparison.headline_pairs if p.metric in metrics]
    return (
        "## Which model is more biased\n\nRanking, best first (\"=\" joins models whose paired difference is not "
        "significant at 5%; an untested pair counts as a tie):\n\n" + "\n".join(ranks) + "\n\n" + "\n".join(pairs)
    )
