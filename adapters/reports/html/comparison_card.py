"""The card comparison.html opens with: models × headline metrics, the ranking, and each pair in words.

Every number is the comparison envelope's (``headlines``, ``headline_pairs``); the ranking orders
them and groups into one tier the runs whose paired difference is not significant at 5%.
"""

from __future__ import annotations

from typing import Any

from culturebias.adapters.reports.comparison_words import metric_values, number, pair_sentence
from culturebias.adapters.reports.html.page import disclosure, text
from culturebias.domain.comparison.envelope import Comparison
from culturebias.domain.comparison.headline_pairs import ranking
from culturebias.domain.headlines import HeadlineMetric, HeadlineValue


def value_cell(entry: HeadlineValue | None) -> str:
    if entry is not None and entry.not_measured is not None:  # a failed validity rule (PROTOCOLS §6)
        return f'<td data-v="" title="{text(entry.not_measured)}">not measured: {text(entry.not_measured.split(":")[0])}</td>'
    if entry is None or entry.value is None:
        return '<td data-v="">not measured</td>'
    interval = entry.interval
    if interval is None:
        ci = '<br><span class="muted">interval not computed</span>'
    elif not interval.defined:
        ci = f'<br><span class="muted">interval not computed: {text(interval.note or "no resampling possible")}</span>'
    else:
        ci = f'<br><span class="muted">{number(interval.low)} to {number(interval.high)}; n = {interval.n:,}</span>'
    return f'<td class="num" data-v="{entry.value!r}"><strong>{number(entry.value)}</strong>{ci}</td>'


def models_table(comparison: Comparison[Any]) -> str:  # Any: a comparison of any benchmark
    metrics = comparison.headline_metrics
    head = "".join(f"<th>{text(m.label)}<br><span class=\"muted\">{text(m.direction_words())}</span></th>" for m in metrics)
    rows = "".join(
        f'<tr><th scope="row">{text(label)}</th>'
        + "".join(value_cell(comparison.headlines.get(label, {}).get(m.name)) for m in metrics)
        + "</tr>"
        for label in comparison.labels()
    )
    return f'<table class="sortable models"><thead><tr><th>model</th>{head}</tr></thead><tbody>{rows}</tbody></table>'


def ranking_line(metric: HeadlineMetric, comparison: Comparison[Any]) -> str:  # Any: a comparison of any benchmark
    tiers = ranking(metric, metric_values(comparison, metric), comparison.headline_pairs)
    shown = " &gt; ".join(" = ".join(f"<strong>{text(label)}</strong>" for label in tier) for tier in tiers)
    return f"<li>{text(metric.label)} ({text(metric.direction_words())}): {shown}</li>"


def comparison_card(comparison: Comparison[Any], title: str) -> str:  # Any: a comparison of any benchmark
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
