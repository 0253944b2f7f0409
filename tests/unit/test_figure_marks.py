"""Every value of a report figure is readable: heat-map labels contrast with their cell, zero bars are seen.

Checked on the matplotlib artists the report functions draw (the figure is caught before it is saved).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

matplotlib = pytest.importorskip("matplotlib")

import numpy as np  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from culturebias.adapters.reports import bbq_report  # noqa: E402
from culturebias.adapters.twbias import report as twbias_report  # noqa: E402
from culturebias.adapters.reports.figure_marks import contrast, label_colour  # noqa: E402
from culturebias.domain.twbias.summary import EthnicityMatrixBlock  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_bbq_report import cbbq_summary  # noqa: E402

GROUPS = ["T1_hoklo", "T2_waishengren", "T4_indigenous"]


@pytest.fixture
def figures(monkeypatch):
    """The figures the report modules draw, kept open instead of saved."""
    caught = []

    def keep(fig, path):
        caught.append(fig)
        return Path(path)

    monkeypatch.setattr(twbias_report, "save_figure", keep)
    monkeypatch.setattr(bbq_report, "save_figure", keep)
    yield caught
    import matplotlib.pyplot as plt

    for fig in caught:
        plt.close(fig)


def matrix(ratio: float, effect: float) -> EthnicityMatrixBlock:
    values = {o: {r: (None if o == r else (ratio if r != GROUPS[2] else 0.0)) for r in GROUPS} for o in GROUPS}
    effects = {o: {r: (None if o == r else (effect if r != GROUPS[2] else 0.0)) for r in GROUPS} for o in GROUPS}
    return EthnicityMatrixBlock(origins=GROUPS, references=GROUPS, labels={g: g for g in GROUPS}, bias_ratio=values, effect_size=effects)


def cell_labels(ax):
    """(label text, its colour, the colour of the cell under it) for every value written on the heat map."""
    image = ax.images[0]
    grid = image.get_array()
    found = []
    for label in ax.texts:
        j, i = (round(c) for c in label.get_position())
        if np.ma.is_masked(grid[i, j]):
            continue  # an undefined cell: nothing is drawn under the dash
        found.append((label.get_text(), to_rgba(label.get_color()), image.cmap(image.norm(grid[i, j]))))
    return found


def test_label_colour_picks_the_better_contrast():
    assert label_colour((1.0, 1.0, 1.0, 1.0)) == "black"
    assert label_colour((0.0, 0.0, 0.0, 1.0)) == "white"
    assert label_colour((0.4, 0.0, 0.05, 1.0)) == "white"  # the darkest red of "Reds"
    assert contrast((1, 1, 1), (0, 0, 0)) == pytest.approx(21.0)


@pytest.mark.parametrize("ratio,effect", [(0.0, 0.0), (1.0, 1.57), (0.5, -0.8)])
def test_every_twbias_heat_map_label_contrasts_with_its_cell(figures, ratio, effect):
    twbias_report._heat_maps(matrix(ratio, effect), Path("."))
    assert len(figures) == 2
    for fig in figures:
        labels = cell_labels(fig.axes[0])
        assert labels, "the heat map writes its values"
        for text, colour, cell in labels:
            assert contrast(colour, cell) >= 4.5, f"label {text!r} in {colour} on a cell of {cell}"
    zeros = [t for fig in figures for t, _, _ in cell_labels(fig.axes[0]) if t == "0.00"]
    assert zeros, "the zero cells are labelled"


def test_the_white_on_white_zero_of_the_bias_ratio_is_black_now(figures):
    twbias_report._heat_maps(matrix(0.0, 0.0), Path("."))
    bias_ratio = figures[0].axes[0]
    colours = {to_rgba(t.get_color()) for t in bias_ratio.texts if t.get_text() == "0.00"}
    assert colours == {to_rgba("black")}


def test_a_cbbq_zero_bar_has_a_visible_mark_and_label(figures):
    summary = cbbq_summary()  # gender: S_amb 0.25, S_dis and S_total undefined
    summary.metrics.by_category["age"] = summary.metrics.by_category["gender"].model_copy(update={"s_amb": 0.0, "s_dis": 0.0, "s_total": 0.0})
    bbq_report.cbbq_figure(summary.metrics, Path("."))
    ax = figures[0].axes[0]
    zero_bars = [b for b in ax.patches if b.get_height() == 0 and b.get_x() > 0.5]  # the "age" group, x = 1
    assert len(zero_bars) == 3
    for bar in zero_bars:
        middle = bar.get_x() + bar.get_width() / 2
        marks = [
            line for line in ax.lines
            if list(line.get_ydata()) == [0, 0] and line.get_xdata()[0] <= middle <= line.get_xdata()[1] and line.get_linewidth() >= 2
        ]
        assert marks, "a zero bar is drawn as a visible line in its own colour"
        assert to_rgba(marks[0].get_color()) == to_rgba(bar.get_facecolor())
        labels = [a for a in ax.texts if a.get_text() == "0" and abs(a.xy[0] - middle) < 1e-9]
        assert labels, "a zero bar is labelled 0"
    undefined = [a for a in ax.texts if a.get_text() == "n/a"]
    assert len(undefined) == 2  # gender's S_dis and S_total: said to be undefined, not drawn as 0


def test_every_comparison_heat_map_label_contrasts_with_its_cell():
    from culturebias.adapters.reports.comparison_figures import heat_map
    from culturebias.adapters.reports.markdown import new_figure

    grid = [[-1.0, -0.5, -0.2, 0.0], [0.1, 0.35, 0.6, 1.0], [None, 0.0, 0.8, -0.9]]
    fig, ax = new_figure()
    try:
        heat_map(ax, grid, ["a", "b", "c"], ["w", "x", "y", "z"], "t", vmin=-1.0, vmax=1.0)
        labels = cell_labels(ax)
        assert len(labels) == 11
        for text, colour, cell in labels:
            assert contrast(colour, cell) >= 4.5, f"label {text!r} in {colour} on a cell of {cell}"
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
