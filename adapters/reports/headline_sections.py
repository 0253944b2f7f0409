"""comparison.md's headline view: every run's headline metrics with their intervals, and one bar figure.

The sections of a benchmark that declares no cross-model views of its own (a plugin
that declares only its headline metrics); every number is the comparison envelope's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from culturebias.adapters.reports.comparison_figures import grouped_bars
from culturebias.adapters.reports.intervals import with_ci
from culturebias.adapters.reports.markdown import table
from culturebias.domain.comparison.envelope import Comparison


def headline_table(comparison: Comparison[Any]) -> str:  # Any: a comparison of any benchmark
    metrics = comparison.headline_metrics
    if not metrics:
        return ""
    rows = []
    unmeasured = comparison.not_measured()
    for label in comparison.labels():
        values = comparison.headlines.get(label, {})
        cells = []
        for metric in metrics:
            entry = values.get(metric.name)
            if label in unmeasured and (entry is None or entry.value is None):
                cells.append("not measured")
            elif entry is not None and entry.not_measured is not None:  # a failed validity rule (PROTOCOLS §6)
                cells.append(f"not measured: {entry.not_measured.split(':')[0]}")
            else:
                cells.append("not computed" if entry is None else with_ci(entry.value, entry.interval, n=entry.interval is not None))
        rows.append([label, *cells])
    legend = "; ".join(f"{m.label}: {m.direction_words()}" for m in metrics)
    return "## Headline metrics\n\n" + table(["model", *(m.label for m in metrics)], rows) + f"\n\n{legend}."


def headline_figure(comparison: Comparison[Any], out_dir: Path) -> list[Path]:  # Any: a comparison of any benchmark
    """Bars of every headline per model, with error bars where the runs computed intervals; [] with nothing to draw."""
    metrics = comparison.headline_metrics
    labels = comparison.labels()
    entries = {label: [comparison.headlines.get(label, {}).get(m.name) for m in metrics] for label in labels}
    if not metrics or all(e is None or e.value is None for row in entries.values() for e in row):
        return []
    path = grouped_bars(
        Path(out_dir) / f"comparison_{comparison.benchmark}_headlines.png",
        [m.label for m in metrics],
        {label: [None if e is None else e.value for e in row] for label, row in entries.items()},
        "headline metrics by model",
        "value",
        intervals={label: [None if e is None else e.interval for e in row] for label, row in entries.items()},
        not_measured=comparison.not_measured(),
    )
    return [path]


def headline_sections(comparison: Comparison[Any], out_dir: Path) -> tuple[list[str], list[Path]]:  # Any: a comparison of any benchmark
    figures = headline_figure(comparison, out_dir)
    pictures = [f"![{p.stem}]({p.name})" for p in figures]
    return [s for s in (headline_table(comparison), *pictures) if s], figures
