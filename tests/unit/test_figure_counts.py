"""McBE and TWBias figures state n on every bar and in every heat-map cell, and draw the summary's intervals
as error bars where it has them; every such number is read from the summary (the figures are caught unsaved)."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

matplotlib = pytest.importorskip("matplotlib")

from culturebias.adapters.mcbe import report as mcbe_report  # noqa: E402
from culturebias.adapters.reports import comparison_figures  # noqa: E402
from culturebias.adapters.twbias import comparison_report as twbias_comparison  # noqa: E402
from culturebias.adapters.twbias import figures as twbias_figures  # noqa: E402
from culturebias.adapters.twbias import report as twbias_report  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_mcbe_report import SUMMARY as MCBE  # noqa: E402
from test_mcbe_report import typed as mcbe_typed  # noqa: E402
from test_twbias_report import spec, summary_payload  # noqa: E402
from test_twbias_report import typed as twbias_typed  # noqa: E402


@pytest.fixture
def figures(monkeypatch):
    caught = []

    def keep(fig, path):
        caught.append((Path(path).name, fig))
        return Path(path)

    for module in (mcbe_report, twbias_report, twbias_figures, twbias_comparison, comparison_figures):
        monkeypatch.setattr(module, "save_figure", keep)
    yield caught
    import matplotlib.pyplot as plt

    for _, fig in caught:
        plt.close(fig)


def n_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts if t.get_text().startswith("n=")]


def test_every_mcbe_category_bar_states_the_categorys_beis(figures, tmp_path):
    summary = mcbe_typed(copy.deepcopy(MCBE))
    mcbe_report.figure(summary, tmp_path)
    (_, fig), = figures
    ax = fig.axes[0]
    bars = [p for p in ax.patches if p.get_height() > 0]
    expected = sorted(
        f"n={c.n_beis}" for c in summary.metrics.categories.values() for t in ("pc", "ss", "ba") if getattr(c, t) is not None
    )
    assert len(bars) == len(expected) == 4
    assert sorted(n_texts(ax)) == expected  # gender's three tasks at n=5, worldview's BA at n=4


def test_mcbe_task_scores_carry_the_summarys_intervals_and_n(figures, tmp_path):
    payload = copy.deepcopy(MCBE)
    interval = {"low": 70.0, "high": 90.0, "n": 9, "unit": "BEI", "method": "percentile", "resamples": 200, "seed": 0}
    payload["metrics"]["intervals"] = {"overall": {**interval, "low": 40.0, "high": 60.0}, "pc": interval}
    written = mcbe_report.McBEReport().write(mcbe_typed(payload), tmp_path)
    assert mcbe_report.TASK_FIGURE in [p.name for p in written]
    fig = dict(figures)[mcbe_report.TASK_FIGURE]
    ax = fig.axes[0]
    caps = [c for c in ax.containers if isinstance(c, matplotlib.container.ErrorbarContainer)]
    assert len(caps) == 1
    segments = caps[0].lines[2][0].get_segments()
    spans = sorted((round(float(s[0][1]), 6), round(float(s[1][1]), 6)) for s in segments)
    assert (70.0, 90.0) in spans and (40.0, 60.0) in spans
    assert n_texts(ax) == ["n=9", "n=9"]  # PC and overall: the tasks without an interval state none
    assert "mcbe_task_intervals.png" in (tmp_path / "report.md").read_text(encoding="utf-8")
    assert mcbe_report.task_figure(mcbe_typed(copy.deepcopy(MCBE)), tmp_path) is None  # no intervals: no such figure


def test_twbias_heat_map_cells_state_the_n_of_their_specification(figures, tmp_path):
    payload = summary_payload()
    payload["metrics"]["ethnicity"]["T4_indigenous->T5_hakka"] = {**spec("T4_indigenous", "T5_hakka", 0.625, -0.3125), "n_rows": 17}
    summary = twbias_typed(payload)
    twbias_report.TWBiasReport().write(summary, tmp_path)
    heat = [fig for name, fig in figures if name.startswith("twbias_ethnicity_") and name != "twbias_ethnicity_categories.png"
            and "p_values" not in name]
    assert len(heat) == 2
    for fig in heat:
        ax = fig.axes[0]
        placed = {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts if t.get_text().startswith("n=")}
        matrix = summary.metrics.ethnicity_matrix
        assert placed == {
            (matrix.origins.index("T1_hoklo"), matrix.references.index("T3_han")): "n=42",
            (matrix.origins.index("T4_indigenous"), matrix.references.index("T5_hakka")): "n=17",
        }
        assert "n in each cell" in ax.get_title()


def test_every_twbias_category_bar_states_the_categorys_sentences(figures, tmp_path):
    summary = twbias_typed(summary_payload())
    twbias_figures.category_figure("gender", summary.metrics.gender, tmp_path)
    (_, fig), = figures
    for ax in fig.axes:
        bars = [p for p in ax.patches if isinstance(p, matplotlib.patches.Rectangle) and p.get_height() < 1]
        assert len(bars) == 2  # two specifications, one category; every value defined (a 0 bar included)
        assert n_texts(ax) == ["n=7", "n=7"]  # by_category's n_rows of each specification


def test_twbias_comparison_heat_maps_state_each_cells_n(figures, tmp_path):
    from test_compare_twbias_libra import twbias

    from culturebias.adapters.twbias.comparison_report import matrix_figure
    from culturebias.application.compare import build_comparison
    from culturebias.testing.benchmarks import comparer

    def labelled(run_id, model, ratio):
        summary = twbias(run_id, model, ratio, 0.1, 0.01)
        block = summary.metrics.ethnicity["T1_hoklo->T3_han"]
        labels = summary.metrics.ethnicity_matrix.labels
        block.origin_label, block.reference_label, block.n_rows = labels["T1_hoklo"], labels["T3_han"], 23
        return summary

    comparison = build_comparison([labelled("r1", "taide", 0.5), labelled("r2", "breeze", 0.1)], comparer("twbias"))
    matrix_figure(comparison, tmp_path / "m.png")
    (_, fig), = figures
    heat = [ax for ax in fig.axes if ax.images]
    assert len(heat) == 4  # two models × bias ratio and effect size
    for ax in heat:
        assert n_texts(ax) == ["n=23"]


def _error_spans(ax, axis: int) -> list[tuple[float, float]]:
    """The (start, end) of every error bar drawn on ``ax``, along x (0) or y (1); a bar without an interval draws
    a zero-length one, left out."""
    caps = [c for c in ax.containers if isinstance(c, matplotlib.container.ErrorbarContainer)]
    spans = [(round(float(s[0][axis]), 6), round(float(s[1][axis]), 6)) for c in caps for s in c.lines[2][0].get_segments()]
    return sorted(span for span in spans if span[0] != span[1])


def test_mcbe_category_bars_carry_each_cells_interval_and_n_past_it(figures, tmp_path):
    payload = copy.deepcopy(MCBE)
    interval = {"n": 5, "unit": "instance (BEI)", "method": "BCa", "resamples": 200, "seed": 0}
    gender = payload["metrics"]["categories"]["gender"]
    gender["intervals"] = {t: {**interval, "low": gender[t] - 3.0, "high": gender[t] + 4.0} for t in ("pc", "ss", "ba")}
    mcbe_report.figure(mcbe_typed(payload), tmp_path)
    (_, fig), = figures
    ax = fig.axes[0]
    spans = _error_spans(ax, 1)
    assert spans == sorted((round(gender[t] - 3.0, 6), round(gender[t] + 4.0, 6)) for t in ("pc", "ss", "ba"))
    above = {round(t.xy[1], 6) for t in ax.texts if t.get_text() == "n=5"}  # annotations: anchored at xy
    assert above == {round(gender[t] + 4.0, 6) for t in ("pc", "ss", "ba")}  # each n sits past its error bar
    assert "95% CI over its BEIs" in ax.get_title()


def test_twbias_category_bars_carry_each_categorys_interval(figures, tmp_path):
    payload = summary_payload()
    interval = {"n": 7, "unit": "sentence pair", "method": "BCa", "resamples": 200, "seed": 0}
    blocks = list(payload["metrics"]["gender"].values())
    for block in blocks:
        for group in block["by_category"].values():
            group["intervals"] = {
                "bias_ratio": {**interval, "low": 0.0, "high": 0.9},
                "effect_size": {**interval, "low": -0.5, "high": 0.75},
            }
    summary = twbias_typed(payload)
    twbias_figures.category_figure("gender", summary.metrics.gender, tmp_path)
    (_, fig), = figures
    ratio_ax, effect_ax = fig.axes[:2]
    assert _error_spans(ratio_ax, 0) == [(0.0, 0.9), (0.0, 0.9)]
    assert _error_spans(effect_ax, 0) == [(-0.5, 0.75), (-0.5, 0.75)]
    assert "95% CI over sentence pairs" in ratio_ax.get_title()
