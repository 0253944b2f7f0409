"""Headline bars with bootstrap error bars per model, for the comparisons whose views have no bars of their own.

Written only when the compared runs carry intervals; each bar states its n.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from culturebias.adapters.reports.comparison_figures import grouped_bars
from culturebias.adapters.reports.intervals import pick
from culturebias.domain.twbias.comparison import TWBiasComparison

TWBIAS_METRICS = {"bias_ratio": "bias ratio", "effect_size": "effect size"}
CBBQ_METRICS = {"s_amb": "S_amb", "s_dis": "S_dis", "s_total": "S_total"}
LIBRA_METRICS = {"lms": "LMS", "ss": "SS", "icat_local": "local iCAT", "jsd": "JSD", "eicat": "EiCAT"}


def twbias_interval_figures(comparison: TWBiasComparison, out_dir: Path) -> list[Path]:
    """TWBias bias ratio and effect size per specification and model, with 95% CIs; [] without intervals."""
    out_dir = Path(out_dir)
    views = comparison.body.specifications
    if not any(h.intervals for v in views.values() for h in v.headline.values()):
        return []
    models = comparison.labels()
    figures = []
    for metric, name in TWBIAS_METRICS.items():
        cells = {m: [views[k].headline.get(m) for k in views] for m in models}
        figures.append(
            grouped_bars(
                out_dir / f"comparison_twbias_{metric}.png",
                list(views),
                {m: [None if c is None else getattr(c, metric) for c in cells[m]] for m in models},
                f"TWBias {name} (95% CI over sentence pairs)",
                name,
                intervals={m: [None if c is None else pick(c.intervals, metric) for c in cells[m]] for m in models},
                not_measured=comparison.not_measured(),
            )
        )
    return figures


def overall_interval_figures(
    comparison: Any, out_dir: Path, overall: dict[str, Any], metrics: dict[str, str], title: str, ylabel: str  # Any: a comparison of any benchmark and its per-model score blocks
) -> list[Path]:
    """One bar per model and metric of its overall scores, with 95% CIs; [] where the runs have no intervals."""
    if not any(s.intervals for s in overall.values()):
        return []
    path = grouped_bars(
        Path(out_dir) / f"comparison_{comparison.benchmark}_intervals.png",
        list(metrics.values()),
        {m: [getattr(s, k) for k in metrics] for m, s in overall.items()},
        title,
        ylabel,
        intervals={m: [pick(s.intervals, k) for k in metrics] for m, s in overall.items()},
        not_measured=comparison.not_measured(),
    )
    return [path]
