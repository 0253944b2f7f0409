"""The card a run's report.html opens with: the benchmark's declared headline metrics, read in words.

Driven by the descriptor's ``HeadlineMetric``s (so a plugin benchmark gets one too): per metric its
value, 95% interval, n and direction, and one sentence in plain words; then the model, the mode and
every warning a reader needs before trusting the numbers (a limited or sampled run, a small model, a
judge that was stopped). A value or interval the summary does not hold reads "not measured" or
"not computed" with the reason, never a blank cell.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from culturebias.adapters.reports.html.page import text
from culturebias.adapters.reports.sample_words import sample_sentence
from culturebias.domain.caveats import low_power, run_caveats
from culturebias.domain.comparison.envelope import main_model
from culturebias.domain.headlines import HeadlineMetric, HeadlineValue, interval_of, value_of
from culturebias.domain.summary import RunSummary
from culturebias.domain.validity import headline_not_measured


def _value(summary: RunSummary, metric: HeadlineMetric) -> HeadlineValue | None:
    try:
        return HeadlineValue(value=value_of(summary, metric), interval=interval_of(summary, metric))
    except KeyError:
        return None


def interval_words(metric: HeadlineMetric, entry: HeadlineValue | None) -> tuple[str, str]:
    """(the interval, its n) as the card shows them; "not computed" with the reason where there is none."""
    if metric.interval is None:
        return "not computed: this benchmark declares no interval for it", "–"
    interval = entry.interval if entry is not None else None
    if interval is None:
        return "not computed: this run's summary holds no interval for it", "–"
    if not interval.defined:
        return f"not computed: {interval.note or 'no resampling was possible'}", f"{interval.n:,}"
    wide = any(v is not None and abs(v) >= 10 for v in (interval.low, interval.high))  # one format for both ends
    return f"{_num(interval.low, wide)} to {_num(interval.high, wide)}", f"{interval.n:,}"


def _num(value: float | None, wide: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if abs(value) < 10 and not wide else f"{value:.1f}"


def metric_cells(summary: RunSummary, metric: HeadlineMetric) -> tuple[str, str, str, str]:
    """(value, interval, n, reading) of one headline as the card reads them: the HTML card's and the terminal's."""
    entry = _value(summary, metric)
    interval, n = interval_words(metric, entry)
    why = headline_not_measured(summary, metric.name)  # the run's reason, or a failed validity rule (PROTOCOLS §6)
    if why is not None and entry is not None and entry.value is not None:
        interval = "not measured"  # a rule failed: the value stays in summary.json, the card does not read it
    if why is None and (entry is None or entry.value is None):
        why = "this run's summary does not hold it" if entry is None else "it is undefined on this run's data"
    if why is not None or entry is None or entry.value is None:
        return "not measured", interval, n, f"Not measured: {why}."
    value = f"{_num(entry.value)}{(' ' + metric.unit) if metric.unit else ''}"
    return value, interval, n, metric.reading(entry.value, entry.interval)


def metric_row(summary: RunSummary, metric: HeadlineMetric) -> str:
    value, interval, n, reading = metric_cells(summary, metric)
    return (
        f'<tr><th scope="row">{text(metric.label)}</th><td class="num value">{text(value)}</td>'
        f'<td class="interval">{text(interval)}</td><td class="num n">{text(n)}</td>'
        f'<td class="direction">{text(metric.direction_words())}</td><td class="reading">{text(reading)}</td></tr>'
    )


def repeats_words(summary: RunSummary, headlines: Sequence[HeadlineMetric]) -> str | None:
    """For a run made ``run.repeats`` times: whose numbers the card shows, and each headline's mean ± std over the runs."""
    repeats = summary.repeats
    if repeats is None or repeats.n < 2:
        return None
    over = []
    for metric in headlines:
        stat = repeats.headline.get(metric.name)
        if stat is None or stat.mean is None:
            continue
        wide = abs(stat.mean) >= 10  # the std in the mean's format
        spread = f" ± {_num(stat.std, wide)}" if stat.std is not None else ""
        over.append(f"{metric.label} {_num(stat.mean, wide)}{spread} ({stat.n} runs)")
    means = f"; mean ± std over the runs: {'; '.join(over)}" if over else ""
    return (
        f"Run {repeats.n} times ({repeats.sampling.replace('_', '-')}): the values and intervals above are those of run "
        f"{repeats.metrics_from + 1}{means}."
    )


def warnings(summary: RunSummary, headlines: Sequence[HeadlineMetric] = ()) -> list[str]:
    """Everything that limits what the numbers say, in words: the repeats, then the run's caveats (domain/caveats.py)."""
    found = []
    if (repeated := repeats_words(summary, headlines)) is not None:
        found.append(repeated)
    for caveat in run_caveats(summary, headlines):
        # A sampled run's sentence points at the strata disclosure below the card.
        sampled = caveat.kind == "sampled" and summary.sample is not None
        found.append(sample_sentence(summary.sample) if sampled and summary.sample is not None else caveat.text)
    return found


def leading_warnings(summary: RunSummary, headlines: Sequence[HeadlineMetric] = ()) -> list[str]:
    """The warnings a card gives before its numbers: headline numbers resting only on few units (TWBias's few pairs)."""
    return [caveat.text for caveat in low_power(summary, headlines)]


def mode_words(summary: RunSummary) -> str:
    mode = getattr(summary.metrics, "mode", None)
    return f"; answers read in {mode} mode" if isinstance(mode, str) and mode else ""


def headline_card(summary: RunSummary, headlines: Sequence[HeadlineMetric], title: str) -> str:
    """The card; '' for a benchmark that declares no headline."""
    if not headlines:
        return ""
    model, backend = main_model(summary)
    who = f"Model <strong>{text(model)}</strong>" + (f" ({text(backend)})" if backend else "")
    head = "".join(
        f'<th class="{c}">{h}</th>' if c else f"<th>{h}</th>"
        for h, c in (("metric", ""), ("value", ""), ("95% interval", "interval"), ("n", ""), ("better", "direction"), ("in words", ""))
    )
    rows = "".join(metric_row(summary, m) for m in headlines)
    lead = leading_warnings(summary, headlines)  # said before the numbers they limit
    notes = [w for w in warnings(summary, headlines) if w not in lead]
    first = f'<ul class="warnings lead">{"".join(f"<li>{text(w)}</li>" for w in lead)}</ul>' if lead else ""
    listed = f'<ul class="warnings">{"".join(f"<li>{text(w)}</li>" for w in notes)}</ul>' if notes else ""
    return (
        f'<section class="card" id="headline" aria-label="headline"><h2>{text(title)}: the answer</h2>{first}'
        f'<p class="who">{who}{text(mode_words(summary))}; run {text(summary.run_id)}.</p>'
        f'<table class="headline"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>{listed}</section>'
    )
