"""The TWBias paper's per-run figures, drawn from the typed summary only (PROTOCOLS §1.7).

- p-value per prompt type per specification (paper Fig. 2/7), on a log axis with
  the alpha line: a point below it is a significant prompt;
- bias ratio and effect size by attribute category (paper Fig. 3/6).

Gender (two specifications) is one panel; ethnicity (sixteen) is one panel per
origin group with a series per reference group, as the paper splits it.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Mapping

from culturebias.adapters.reports.figure_marks import label_barh_n
from culturebias.adapters.reports.intervals import error_bars, pick
from culturebias.adapters.reports.markdown import save_figure
from culturebias.adapters.twbias.few_pairs import few_words
from culturebias.domain.twbias.summary import SpecificationBlock
from culturebias.domain.uncertainty.interval import Interval

# Below this many specifications one panel holds them all.
ONE_PANEL = 4
# p = 0 (underflow) cannot sit on a log axis: it is drawn at this floor.
P_FLOOR = 1e-300


def _panels(specs: Mapping[str, SpecificationBlock]) -> list[tuple[str, dict[str, SpecificationBlock]]]:
    """(panel title, {series label: block}); one panel, or one per origin group."""
    if len(specs) <= ONE_PANEL:
        return [("", {_series(k, b, by_origin=False): b for k, b in specs.items()})]
    panels: dict[str, dict[str, SpecificationBlock]] = {}
    for key, block in specs.items():
        panels.setdefault(f"origin {block.origin_label}", {})[_series(key, block, by_origin=True)] = block
    return list(panels.items())


def _series(key: str, block: SpecificationBlock, by_origin: bool) -> str:
    if by_origin:
        return f"→ {block.reference_label}"
    return f"{key} ({block.origin_label} → {block.reference_label})"


def _value(value: float | None) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def _subplots(rows: int, cols: int, width: float, height: float):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from culturebias.adapters.reports.fonts import use_script_fonts

    use_script_fonts()
    fig, axes = plt.subplots(rows, cols, figsize=(width, height), squeeze=False)
    return fig, axes


def _save(fig, path: Path) -> Path:
    with warnings.catch_warnings():
        # A category name in Chinese may lack a glyph in the default font: the figure is still written.
        warnings.filterwarnings("ignore", message=r".*[Gg]lyph.*missing.*")
        return save_figure(fig, path)


Panel = tuple[str, dict[str, list[float]]]  # (title, {series label: one value per x position})


def p_value_series(specs: Mapping[str, SpecificationBlock], prompt_types: list[str]) -> list[Panel]:
    """What the p-value figure plots: per panel, per specification, p per prompt type (NaN where untestable)."""
    return [
        (title, {label: [_value(b.prompts[t].p_value) if t in b.prompts else math.nan for t in prompt_types] for label, b in series.items()})
        for title, series in _panels(specs)
    ]


def category_series(specs: Mapping[str, SpecificationBlock], metric: str) -> tuple[list[str], list[Panel]]:
    """What the category figure plots for ``metric`` (bias_ratio or effect_size): the categories, and per
    panel, per specification, one value per category (NaN where the category has no testable prompt)."""
    categories = sorted({c for b in specs.values() for c in b.by_category})
    panels = [
        (
            title,
            {
                label: [_value(getattr(b.by_category[c], metric)) if c in b.by_category else math.nan for c in categories]
                for label, b in series.items()
            },
        )
        for title, series in _panels(specs)
    ]
    return categories, panels


def category_intervals(specs: Mapping[str, SpecificationBlock], metric: str) -> list[dict[str, list[Interval | None]]]:
    """The interval of each bar of the category figure for ``metric``, panel by panel (None: none in the summary)."""
    categories = sorted({c for b in specs.values() for c in b.by_category})
    return [
        {
            label: [pick(b.by_category[c].intervals, metric) if c in b.by_category else None for c in categories]
            for label, b in series.items()
        }
        for _, series in _panels(specs)
    ]


def category_counts(specs: Mapping[str, SpecificationBlock]) -> list[dict[str, list[int | None]]]:
    """The n of each bar of the category figure, panel by panel: the category's sentences (``n_rows``)."""
    categories = sorted({c for b in specs.values() for c in b.by_category})
    return [
        {label: [b.by_category[c].n_rows if c in b.by_category else None for c in categories] for label, b in series.items()}
        for _, series in _panels(specs)
    ]


def category_flags(specs: Mapping[str, SpecificationBlock]) -> list[dict[str, list[str | None]]]:
    """Each bar's flag of the category figure, panel by panel: "few pairs: n = 3, low power" where the category's
    numbers rest only on prompt types tested on few pairs, else None."""
    categories = sorted({c for b in specs.values() for c in b.by_category})
    return [
        {label: [few_words(b.by_category[c].few_pairs) or None if c in b.by_category else None for c in categories]
         for label, b in series.items()}
        for _, series in _panels(specs)
    ]


def p_value_figure(
    axis: str, specs: Mapping[str, SpecificationBlock], prompt_types: list[str], alpha: float, out_dir: Path
) -> Path:
    """``twbias_<axis>_p_values.png``: each specification's p-value per prompt type (paper Fig. 2/7)."""
    panels = p_value_series(specs, prompt_types)
    fig, axes = _subplots(len(panels), 1, 8.0, 3.2 * len(panels) + 0.6)
    x = list(range(len(prompt_types)))
    for (title, series), ax in zip(panels, axes[:, 0]):
        for label, p in series.items():
            shown = [max(v, P_FLOOR) if math.isfinite(v) else math.nan for v in p]
            (line,) = ax.plot(x, shown, marker="o", markerfacecolor="white", linewidth=1.2, label=label)
            hits = [(i, v) for i, v in zip(x, shown) if math.isfinite(v) and v < alpha]
            if hits:  # filled markers: significant prompts; hollow ones are not
                ax.scatter([i for i, _ in hits], [v for _, v in hits], s=45, color=line.get_color(), zorder=3)
        ax.axhline(alpha, color="black", linestyle="--", linewidth=1, label=f"alpha = {alpha:g}")
        ax.set_yscale("log")
        ax.set_xticks(x, prompt_types)
        ax.set_xlabel("prompt type (0: no template, 00: empty user turn, 1-10: user prompts)")
        ax.set_ylabel("p-value")
        ax.set_title(f"{axis.capitalize()}: p-value per prompt type" + (f", {title}" if title else ""), fontsize=10)
        ax.legend(fontsize=7, loc="best")
    return _save(fig, Path(out_dir) / f"twbias_{axis}_p_values.png")


def flagged_ticks(categories: list[str], flags: Mapping[str, list[str | None]]) -> list[str]:
    """Each category's tick label, with the few-pairs flag of its bars under it (beside the axis, where no bar,
    interval or n label can cover it): "Ability\nfemale: few pairs: n = 3, low power"."""
    ticks = []
    for i, category in enumerate(categories):
        said = [(label.split(" (")[0], flag) for label, marks in flags.items() if (flag := marks[i])]
        lines: list[str] = [flag if len(flags) == 1 else f"{who}: {flag}" for who, flag in said]
        ticks.append("\n".join([category, *lines]))
    return ticks


def category_figure(axis: str, specs: Mapping[str, SpecificationBlock], out_dir: Path) -> Path:
    """``twbias_<axis>_categories.png``: bias ratio and effect size by attribute category (paper Fig. 3/6)."""
    import numpy as np

    categories, ratios = category_series(specs, "bias_ratio")
    _, effects = category_series(specs, "effect_size")
    counts = category_counts(specs)
    flags = category_flags(specs)
    intervals = {metric: category_intervals(specs, metric) for metric in ("bias_ratio", "effect_size")}
    with_bars = any(i is not None for panels in intervals.values() for p in panels for v in p.values() for i in v)
    any_flag = any(f for p in flags for v in p.values() for f in v)
    fig, axes = _subplots(len(ratios), 2, 12.5 if any_flag else 11.0, max(3.4, 0.3 * len(categories) + 1.2) * len(ratios))
    y = np.arange(len(categories))
    for index, (panel_ratio, panel_effect, panel_counts, row) in enumerate(zip(ratios, effects, counts, axes)):
        title = panel_ratio[0]
        for metric, (_, series), ax in zip(("bias_ratio", "effect_size"), (panel_ratio, panel_effect), row):
            height = 0.8 / max(len(series), 1)
            for s, (label, values) in enumerate(series.items()):
                offset = y + (s - (len(series) - 1) / 2) * height
                found = intervals[metric][index][label]
                points = [v if math.isfinite(v) else None for v in values]
                bars = ax.barh(offset, np.nan_to_num(values, nan=0.0), height, label=label,
                               xerr=error_bars(points, found) if any(found) else None, capsize=2)
                label_barh_n(ax, bars, values, panel_counts[label], [(i.low, i.high) if i else (None, None) for i in found])
                for bar, flag in zip(bars, flags[index][label]):
                    if flag:  # hatched, and said under its category's name: shown, never dropped
                        bar.set_hatch("///")
                for i, v in enumerate(values):
                    if not math.isfinite(v):  # no testable prompt in this category: say so, not a bar of 0
                        ax.text(0, offset[i], " –", va="center", fontsize=7)
            ax.axvline(0, color="black", linewidth=0.8)
            ax.set_yticks(y, flagged_ticks(categories, flags[index]), fontsize=8)
            ax.invert_yaxis()
            if metric == "bias_ratio":
                ax.set_xlim(0, 1.15)  # room for the n past a bar of 1
                ax.set_xlabel("bias ratio (share of prompts 1-10 with p < alpha)")
            else:
                ax.margins(x=0.15)
                ax.set_xlabel("effect size (mean over significant prompts)")
            ax.set_title(f"{axis.capitalize()} by attribute category" + (f", {title}" if title else "")
                         + ("\n(n: its sentences; error bars: 95% CI over sentence pairs)" if with_bars
                            else "\n(n: its sentences; this summary has no interval per category)")
                         + ("\nhatched: few pairs, low power" if any_flag else ""),
                         fontsize=9)
        row[0].legend(fontsize=7, loc="best")
    return _save(fig, Path(out_dir) / f"twbias_{axis}_categories.png")
