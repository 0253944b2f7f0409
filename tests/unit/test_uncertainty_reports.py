"""Intervals in reports: cells, legends, the comparison tables and figures (every number from the summaries)."""

from __future__ import annotations

import random

import pytest

from culturebias.testing.benchmarks import comparer, comparison_report
from culturebias.adapters.reports.intervals import bounds, ci_cells, error_bars, legend, with_ci
from culturebias.testing.scripted import ScriptedGenerator
from culturebias.application.compare import compare_summaries
from culturebias.domain.uncertainty import Interval, mean_interval
from culturebias.testing.context import run_with_fakes
from culturebias.testing.kobbq_runs import kobbq_run


def interval(low, high, n=12, unit="template") -> Interval:
    return Interval(low=low, high=high, n=n, unit=unit, method="BCa", resamples=2000, seed=0)


def test_cells_show_value_bounds_and_n():
    i = interval(0.1, 0.3)
    assert bounds(i) == "[0.100, 0.300]" and with_ci(0.2, i) == "0.200 [0.100, 0.300]"
    assert with_ci(0.2, i, n=True) == "0.200 [0.100, 0.300] n=12"
    assert with_ci(0.2, None) == "0.200" and bounds(None) == ""
    assert bounds(interval(None, None)) == "[–]"
    assert ci_cells({"a": i}, ["a", "b"]) == ["[0.100, 0.300]", "", "12 templates"]
    assert "95% bootstrap confidence interval over templates" in legend([i]) and "2000 resamples, seed 0" in legend([i])


def test_error_bars_run_from_the_value_to_each_bound():
    below, above = error_bars([0.2, None, 0.5], [interval(0.1, 0.3), interval(0.0, 1.0), None])
    assert below == pytest.approx([0.1, 0.0, 0.0]) and above == pytest.approx([0.1, 0.0, 0.0])
    below, above = error_bars([2.0], [mean_interval([1.0, 2.0, 3.0], unit="item", seed=0)])
    assert below[0] >= 0 and above[0] >= 0


def test_kobbq_comparison_shows_each_runs_intervals_and_draws_them(tmp_path):
    runs = [kobbq_run("random", name=name, seed=seed, options={"limit": 120}).summary for name, seed in (("a", 1), ("b", 2))]
    result = compare_summaries(runs, comparer("kobbq"), out_dir=tmp_path, report=comparison_report("kobbq"))
    rows = result.comparison.body.table3
    assert [rows[name].intervals for name in ("a", "b")] == [s.metrics.overall.intervals for s in runs]
    report = (tmp_path / "comparison.md").read_text(encoding="utf-8")
    assert "95% CI Acc amb" in report and "bootstrap confidence interval over templates" in report
    for name, summary in zip(("a", "b"), runs):
        cells = ci_cells(summary.metrics.overall.intervals, ["acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis"])
        assert " | ".join(cells) in report
    assert (tmp_path / "comparison_kobbq.png").is_file()


def cbbq_run(name: str, seed: int):
    rng = random.Random(seed)
    return run_with_fakes(
        "cbbq", options={"mode": "generate", "limit": 4}, generator=ScriptedGenerator(lambda r, p: rng.choice("ABC"), name=name)
    ).summary


def test_cbbq_comparison_adds_bars_with_intervals_per_model(tmp_path):
    runs = [cbbq_run("a", 1), cbbq_run("b", 2)]
    result = compare_summaries(runs, comparer("cbbq"), out_dir=tmp_path, report=comparison_report("cbbq"))
    assert [p.name for p in result.report_paths] == ["comparison.md", "comparison_cbbq.png", "comparison_cbbq_intervals.png"]
    report = (tmp_path / "comparison.md").read_text(encoding="utf-8")
    s_amb = runs[0].metrics.overall.intervals["s_amb"]
    assert f"{bounds(s_amb)} | {s_amb.n} templates |" in report
