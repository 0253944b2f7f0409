"""Marks that keep every value of a figure readable: label colour by cell luminance, visible zero bars."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def luminance(rgba: Sequence[float]) -> float:
    """Relative luminance (WCAG) of an sRGB colour with channels in 0..1."""

    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgba[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(first: Sequence[float], second: Sequence[float]) -> float:
    """WCAG contrast ratio (1..21) between two colours."""
    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def label_colour(cell_rgba: Sequence[float]) -> str:
    """Black or white, whichever contrasts more with the cell it is written on."""
    return "black" if contrast(cell_rgba, (0, 0, 0)) >= contrast(cell_rgba, (1, 1, 1)) else "white"


def label_cells(
    ax: Any, image: Any, grid: Any,  # Any: matplotlib objects (imported lazily) and a grid of numbers
    digits: int = 2, fontsize: int = 9, counts: Sequence[Sequence[int | None]] | None = None,
) -> None:
    """Write each cell's value on a heat map in the colour that reads on that cell ("–" on an empty one),
    and under it the cell's n where ``counts`` (a grid like ``grid``) gives one."""
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            if value is None or not math.isfinite(float(value)):
                ax.text(j, i, "–", ha="center", va="center", fontsize=fontsize, color="black")
                continue
            colour = label_colour(image.cmap(image.norm(float(value))))
            n = counts[i][j] if counts is not None else None
            ax.text(j, i - (0.12 if n is not None else 0), f"{float(value):.{digits}f}", ha="center", va="center",
                    fontsize=fontsize, color=colour)
            if n is not None:
                ax.text(j, i + 0.22, f"n={n:,}", ha="center", va="center", fontsize=max(6, fontsize - 2), color=colour)


def label_barh_n(
    ax: Any, bars: Any, values: Sequence[float], ns: Sequence[int | None],  # Any: matplotlib objects (imported lazily)
    ends: Sequence[tuple[float | None, float | None]] = (),
) -> None:
    """Write ``n=…`` past the end of each horizontal bar, or of its error bar (``ends``: each bar's interval
    low and high); ``label_bar_n`` for upright ones. A NaN value is no bar, no n."""
    ends = list(ends) or [(None, None)] * len(values)
    for bar, value, n, (low, high) in zip(bars, values, ns, ends):
        if n is None or not math.isfinite(value):
            continue
        reach = [v for v in ((high, value) if value >= 0 else (low, value)) if v is not None and math.isfinite(v)]
        end = max(reach) if value >= 0 else min(reach)
        ax.annotate(f"n={n:,}", (end, bar.get_y() + bar.get_height() / 2), xytext=(2 if value >= 0 else -2, 0),
                    textcoords="offset points", ha="left" if value >= 0 else "right", va="center", fontsize=6)


def mark_zero_bars(ax: Any, bars: Any, values: Sequence[float | None], fontsize: int = 7) -> None:  # Any: matplotlib objects (imported lazily)
    """A bar of height 0 has no area: outline it in its own colour and write "0" on the axis so it is seen.

    An undefined value (None / NaN) is written "n/a" instead, so a missing bar is not read as a zero.
    """
    for bar, value in zip(bars, values):
        undefined = value is None or (isinstance(value, float) and math.isnan(value))
        if not undefined and value != 0:
            continue
        x = bar.get_x() + bar.get_width() / 2
        if not undefined:
            ax.plot(
                [bar.get_x(), bar.get_x() + bar.get_width()], [0, 0],
                color=bar.get_facecolor(), linewidth=3, solid_capstyle="butt", zorder=3, clip_on=False,
            )
        ax.annotate(
            "n/a" if undefined else "0", (x, 0), xytext=(0, 2), textcoords="offset points",
            ha="center", va="bottom", fontsize=fontsize, color="black",
        )


def label_bar_n(ax: Any, bars: Any, values: Sequence[float | None], ns: Sequence[int | None], highs: Sequence[float | None] = ()) -> None:  # Any: matplotlib axes and bar containers (matplotlib is read as Any)
    """Write ``n=…`` above each bar (past the top of its error bar, ``highs``); nothing where n is unknown."""
    highs = list(highs) or [None] * len(values)
    for bar, value, n, high in zip(bars, values, ns, highs):
        if n is None:
            continue
        finite = [v for v in (value, high, 0.0) if v is not None and math.isfinite(v)]
        ax.annotate(f"n={n:,}", (bar.get_x() + bar.get_width() / 2, max(finite)), xytext=(0, 2), textcoords="offset points",
                    ha="center", va="bottom", fontsize=6)


def nothing_to_show(ax: Any, why: str) -> None:  # Any: matplotlib axes and bar containers (matplotlib is read as Any)
    """In place of empty axes: the reason the figure has no bar, in words."""
    ax.set_axis_off()
    ax.text(0.5, 0.5, f"Nothing to show: {why}", ha="center", va="center", wrap=True, fontsize=10, transform=ax.transAxes)
