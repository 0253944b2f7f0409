"""Figures shared by the comparison reports: labelled heat maps and grouped bars (matplotlib, Agg, imported lazily)."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from pathlib import Path

from culturebias.adapters.reports.intervals import error_bars, label_n
from culturebias.adapters.reports.figure_marks import label_colour, nothing_to_show
from culturebias.adapters.reports.markdown import new_figure, save_figure
from culturebias.domain.uncertainty.interval import Interval

Grid = Sequence[Sequence[float | None]]


def _text_colour(rgba: Sequence[float]) -> str:
    """Black on light cells, white on dark ones (WCAG contrast), so every label is readable."""
    return label_colour(rgba)


def heat_map(ax, grid: Grid, rows: Sequence[str], columns: Sequence[str], title: str, vmin: float, vmax: float, cmap: str = "RdBu_r",
             counts: Sequence[Sequence[int | None]] | None = None):
    """A labelled heat map; with ``counts`` (a grid like ``grid``) each defined cell states its n under its value."""
    import matplotlib
    import numpy as np

    values = np.array([[math.nan if v is None else v for v in row] for row in grid], dtype=float)
    colours = matplotlib.colormaps[cmap]
    norm = matplotlib.colors.Normalize(vmin=vmin, vmax=vmax)
    image = ax.imshow(np.ma.masked_invalid(values), cmap=colours, norm=norm, aspect="auto")
    ax.set_xticks(range(len(columns)), labels=list(columns), rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)), labels=list(rows), fontsize=8)
    ax.set_title(title, fontsize=9)
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            if math.isnan(value):
                ax.text(j, i, "n/a", ha="center", va="center", fontsize=7, color="black")
            else:
                n = counts[i][j] if counts is not None else None
                colour = _text_colour(colours(norm(value)))
                ax.text(j, i - (0.15 if n is not None else 0), f"{value:.2f}", ha="center", va="center", fontsize=7, color=colour)
                if n is not None:
                    ax.text(j, i + 0.22, f"n={n:,}", ha="center", va="center", fontsize=6, color=colour)
    return image


# One colour per compared model, by its place in the comparison, in every figure of a page (Okabe-Ito:
# told apart with colour-blindness, each with a 3:1 contrast or more against white but the yellow, kept last).
MODEL_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")


def model_colour(index: int) -> str:
    return MODEL_COLOURS[index % len(MODEL_COLOURS)]


def grouped_bars(
    path: Path,
    groups: Sequence[str],
    series: dict[str, Sequence[float | None]],
    title: str,
    ylabel: str,
    errors: dict[str, Sequence[float | None]] | None = None,
    intervals: dict[str, Sequence[Interval | None]] | None = None,
    not_measured: Collection[str] = (),
) -> Path:
    """One bar per series in each group; a zero bar gets an outline and its value so that it stays visible.

    ``intervals`` (a series' bootstrap intervals, bar by bar) draw asymmetric error bars from their
    bounds, in place of ``errors``, and write each bar's n above it. An undefined value draws no bar,
    error bar or n: it is written "n/a", or "not measured" for a series (a run) in ``not_measured``,
    whose legend entry says so too.
    """
    fig, ax = new_figure(max(6.0, 0.9 * len(groups) * max(1, len(series)) ** 0.5 + 2), 4.0)
    if all(v is None for values in series.values() for v in values):
        nothing_to_show(ax, "no model has a value of these metrics (every one is undefined)")
        ax.set_title(title, fontsize=10)
        return save_figure(fig, path)
    width = 0.8 / max(1, len(series))
    for k, (name, values) in enumerate(series.items()):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(groups))]
        heights = [math.nan if v is None else v for v in values]
        yerr: list[float] | list[list[float]] | None = None
        if errors is not None and name in errors:
            yerr = [0.0 if e is None or v is None else e for e, v in zip(errors[name], values)]
        if intervals is not None and name in intervals:
            yerr = error_bars(values, intervals[name])
        label = f"{name} (not measured)" if name in not_measured else name
        bars = ax.bar(xs, heights, width, label=label, yerr=yerr, capsize=2, edgecolor="black", linewidth=0.5,
                      color=model_colour(k))
        if intervals is not None and name in intervals:
            label_n(ax, bars, values, intervals[name])
        for bar, value in zip(bars, values):
            if value is None or value == 0:
                text = "0" if value is not None else "not measured" if name in not_measured else "n/a"
                ax.annotate(text, (bar.get_x() + bar.get_width() / 2, 0), ha="center", va="bottom", fontsize=6,
                            rotation=90 if value is None else 0)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xticks(range(len(groups)), labels=list(groups), rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    return save_figure(fig, path)
