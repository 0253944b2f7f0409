"""The headline card as plain text, for the terminal at the end of ``culturebias run``.

The same cells and words as the card report.html opens with (``html/headline_card.py``): per
headline metric its value, 95% interval, n and the sentence in words, then every warning a
reader needs before trusting the numbers (a headline resting only on few
units is said first, before the numbers). Every number comes from the run's summary.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from culturebias.adapters.reports.html.headline_card import leading_warnings, metric_cells, mode_words, warnings
from culturebias.domain.comparison.envelope import main_model
from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.summary import RunSummary

WIDTH = 100


def _wrapped(prefix: str, sentence: str) -> list[str]:
    return textwrap.wrap(sentence, WIDTH, initial_indent=prefix, subsequent_indent=" " * len(prefix)) or [prefix.rstrip()]


def _said_in(reason: str, notes: Sequence[str]) -> bool:
    """Whether every check's reason (``a: ...; b: ...``) is in the warnings already."""
    said = " ".join(notes)
    return all(part.strip().rstrip(".") in said for part in reason.split("; "))


def headline_text(summary: RunSummary, headlines: Sequence[HeadlineMetric], title: str) -> str:
    """The card in lines of text; '' for a benchmark that declares no headline."""
    if not headlines:
        return ""
    model, backend = main_model(summary)
    lines = [f"{title}: the answer"]
    lead = leading_warnings(summary, headlines)  # said before the numbers they limit (TWBias: every test on few pairs)
    for warning in lead:
        lines += _wrapped("  warning: ", warning)
    lines.append(f"  model {model}" + (f" ({backend})" if backend else "") + f"{mode_words(summary)}; run {summary.run_id}")
    notes = [w for w in warnings(summary, headlines) if w not in lead]
    for metric in headlines:
        value, interval, n, reading = metric_cells(summary, metric)
        if value == "not measured":  # no value: its interval and n cells say nothing more
            lines.append(f"  {metric.label}: {value}  ({metric.direction_words()})")
        else:
            lines.append(f"  {metric.label}: {value}  (95% interval {interval}; n {n}; {metric.direction_words()})")
        reason = reading.removeprefix("Not measured: ")
        if reason != reading and _said_in(reason, notes):
            reading = "Not measured: the warnings below say why."  # the same reason, once
        lines += _wrapped("    ", reading)
    for warning in notes:
        lines += _wrapped("  warning: ", warning)
    return "\n".join(lines)
