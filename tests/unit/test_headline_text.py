"""The headline card as text at the end of `culturebias run`: the report card's cells, from the summary."""

from __future__ import annotations

import functools

from culturebias.adapters.reports.headline_text import headline_text
from culturebias.adapters.reports.html.headline_card import metric_cells, warnings
from culturebias.bootstrap.registry import registry
from culturebias.domain.headlines import interval_of, value_of
from culturebias.testing.kobbq_runs import kobbq_run


@functools.cache
def summary():
    return kobbq_run("correct", options={"limit": 40}).summary


def test_the_card_has_each_headline_value_interval_n_sentence_and_the_warnings():
    descriptor = registry().benchmark("kobbq")
    run = summary()
    card = headline_text(run, descriptor.headline_metrics(), descriptor.title)
    lines = card.splitlines()
    measured = 0
    assert lines[0] == "KoBBQ: the answer" and run.run_id in lines[1]
    for metric in descriptor.headline_metrics():
        value, interval, n, reading = metric_cells(run, metric)
        row = next(line for line in lines if line.startswith(f"  {metric.label}: "))
        if value == "not measured":
            assert row == f"  {metric.label}: not measured  ({metric.direction_words()})"
        else:
            assert f"{metric.label}: {value}  (95% interval {interval}; n {n}; {metric.direction_words()})" in row
            assert float(value.split()[0]) == round(value_of(run, metric), 3)
            low, high = interval_of(run, metric).low, interval_of(run, metric).high
            assert interval == f"{low:.3f} to {high:.3f}"
            assert " ".join(reading.split()[:4]) in card  # the sentence in words, wrapped
            measured += 1
    assert measured >= 2
    notes = warnings(run, descriptor.headline_metrics())
    assert notes and card.count("  warning: ") == len(notes)
    assert any("limited run" in note for note in notes)


def test_a_benchmark_without_headlines_prints_no_card():
    assert headline_text(summary(), (), "KoBBQ") == ""


def test_a_reason_the_warnings_give_is_not_repeated_under_each_metric():
    """Several failed checks (``a: ...; b: ...``) on a small run: each metric points to the warnings, which say it once."""
    descriptor = registry().benchmark("kobbq")
    run = kobbq_run("correct", options={"limit": 8}).summary
    card = headline_text(run, descriptor.headline_metrics(), descriptor.title)
    notes = warnings(run, descriptor.headline_metrics())
    failed = [note for note in notes if note.startswith("Not measured: ")]
    assert len(failed) >= 2  # more than one check failed: the reason joins them with "; "
    assert "Not measured: the warnings below say why." in card
    assert "  diff-bias in ambiguous contexts: not measured  (closer to 0 is better)" in card.splitlines()  # no empty cells
    for note in failed:
        check = note.split(": ", 2)[-1].split(":")[0]  # e.g. position_dominance
        assert card.count(check + ":") == 1, check
