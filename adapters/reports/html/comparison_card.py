"""The card comparison.html opens with: models × headline metrics, the ranking, and each pair in words.

Every number is the comparison envelope's (``headlines``, ``headline_pairs``); the ranking orders
them and groups into one tier the runs whose paired difference is not significant at 5%.
"""

from __future__ import annotations

from typing import Any

from culturebias.adapters.reports.html.page import disclosure, text
from culturebias.domain.comparison.envelope import Comparison
from culturebias.domain.comparison.headline_pairs import HeadlinePair, ranking
from culturebias.domain.headlines import HeadlineMetric, HeadlineValue


def _num(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "–"
    shown = f"{value:+.3f}" if signed else f"{value:.3f}"
    return shown.replace("-", "−")


def value_cell(entry: HeadlineValue | None) -> str:
    if entry is None or entry.value is None:
        return '<td data-v="">not measured</td>'
    interval = entry.interval
    if interval is None:
        ci = '<br><span class="muted">interval not computed</span>'
    elif not interval.defined:
        ci = f'<br><span class="muted">interval not computed: {text(interval.note or "no resampling possible")}</span>'
    else:
        ci = f'<br><span class="muted">{_num(interval.low)} to {_num(interval.high)}; n = {interval.n:,}</span>'
    return f'<td class="num" data-v="{entry.value!r}"><strong>{_num(entry.value)}</strong>{ci}</td>'


def models_table(comparison: Comparison[Any]) -> str:
    metrics = comparison.headline_metrics
    head = "".join(f"<th>{text(m.label)}<br><span class=\"muted\">{text(m.direction_words())}</span></th>" for m in metrics)
    rows = "".join(
        f'<tr><th scope="row">{text(label)}</th>'
        + "".join(value_cell(comparison.headlines.get(label, {}).get(m.name)) for m in metrics)
        + "</tr>"
        for label in comparison.labels()
    )
    return f'<table class="sortable models"><thead><tr><th>model</th>{head}</tr></thead><tbody>{rows}</tbody></table>'


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
    amount = f"{_num(difference, signed=True)} ({what}"
    if pair.p_value is None:
        return (
            f"{pair.b} {'does better' if pair.difference < 0 else 'does worse' if pair.difference > 0 else 'does the same'} "
            f"than {pair.a} on {metric.label}: {amount}); {pair.note or 'not tested'}."
        )
    tested = f"{amount}; 95% CI {_num(low, True)} to {_num(high, True)}, {_p(pair.p_value)}, paired over {pair.n:,} {pair.unit}s)"
    if not pair.significant:
        return f"{pair.b} and {pair.a} do not differ significantly on {metric.label}: {tested}."
    verb = "does better" if pair.difference < 0 else "does worse"
    return f"{pair.b} {verb} than {pair.a} on {metric.label} ({metric.direction_words()}): {tested}."


def ranking_line(metric: HeadlineMetric, comparison: Comparison[Any]) -> str:
    values = {label: (e.value if (e := comparison.headlines.get(label, {}).get(metric.name)) else None) for label in comparison.labels()}
    tiers = ranking(metric, values, comparison.headline_pairs)
    shown = " &gt; ".join(" = ".join(f"<strong>{text(label)}</strong>" for label in tier) for tier in tiers)
    return f"<li>{text(metric.label)} ({text(metric.direction_words())}): {shown}</li>"


def comparison_card(comparison: Comparison[Any], title: str) -> str:
    metrics = comparison.headline_metrics
    if not metrics:
        return ""
    by_name = {m.name: m for m in metrics}
    sentences = "".join(
        f"<li>{text(pair_sentence(by_name[p.metric], p))}</li>" for p in comparison.headline_pairs if p.metric in by_name
    )
    untested = any(p.p_value is None for p in comparison.headline_pairs)
    caveat = (
        '<p class="muted">"=" joins models whose paired difference is not significant at 5%; a pair that could not be '
        "tested counts as a tie.</p>"
        if untested
        else '<p class="muted">"=" joins models whose paired difference is not significant at 5%.</p>'
    )
    pairs = disclosure(
        "Each pair of models",
        "The paired difference of every two models on every headline, in words.",
        f'<ul class="pairs">{sentences}</ul>',
        opened=len(comparison.headline_pairs) <= 6,
    )
    return (
        f'<section class="card" id="headline" aria-label="headline"><h2>{text(title)}: which model is more biased</h2>'
        '<p class="muted">Each cell: the model\'s value, its 95% interval and n (the resampling units).</p>'
        f"{models_table(comparison)}"
        f'<h3>Ranking, best first</h3><ul class="ranking">{"".join(ranking_line(m, comparison) for m in metrics)}</ul>{caveat}'
        f"{pairs}</section>"
    )
