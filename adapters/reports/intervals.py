"""Bootstrap intervals in reports: "value [low, high]" cells, an uncertainty table, error bars.

Every bound, n and unit shown here is the summary's ``Interval`` (domain/uncertainty).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from culturebias.adapters.reports.markdown import fmt, table
from culturebias.domain.libra.summary import LibraScoresBlock
from culturebias.domain.uncertainty.interval import SCORE_METHODS, Interval


def bounds(interval: Interval | None, digits: int = 3) -> str:
    """``[low, high]``; ``[–]`` when the interval is undefined; empty without an interval."""
    if interval is None:
        return ""
    if not interval.defined:
        return "[–]"
    return f"[{fmt(interval.low, digits)}, {fmt(interval.high, digits)}]"


def with_ci(value: object, interval: Interval | None, digits: int = 3, n: bool = False) -> str:
    """``value [low, high]`` (and ``n=…`` when asked); the plain value without an interval."""
    text = fmt(value, digits)
    if interval is None:
        return text
    return f"{text} {bounds(interval, digits)}" + (f" n={interval.n}" if n else "")


def pick(intervals: Mapping[str, Interval] | None, name: str) -> Interval | None:
    return None if intervals is None else intervals.get(name)


def legend(intervals: Sequence[Interval | None]) -> str:
    """One sentence naming what the brackets are (level, unit, method, resamples, seed) for the intervals shown."""
    shown = [i for i in intervals if i is not None]
    if not shown:
        return ""
    first = shown[0]
    methods = "/".join(sorted({i.method for i in shown if i.method not in ("none", *SCORE_METHODS)})) or "none"
    scores = "/".join(sorted({i.method for i in shown if i.method in SCORE_METHODS}))
    units = ", ".join(sorted({i.unit for i in shown}))
    edge = (f"; where every resample gave the same value, a {scores} score interval over the units instead (the note "
            "says which)" if scores else "")
    return (
        f"Brackets: {first.level:.0%} bootstrap confidence interval over {units}s (scipy.stats.bootstrap, {methods}, "
        f"{first.resamples} resamples, seed {first.seed}){edge}; n counts those units."
    )


def uncertainty_section(rows: Mapping[str, tuple[object, Interval | None]], title: str = "## Uncertainty", digits: int = 3) -> str:
    """A table of metric, value, interval, n and unit, method and note; empty when no metric has an interval."""
    shown = {name: (value, interval) for name, (value, interval) in rows.items() if interval is not None}
    if not shown:
        return ""
    body = table(
        ["metric", "value", "95% CI", "n", "unit", "method", "note"],
        (
            [name, fmt(value, digits), bounds(i, digits), i.n, i.unit, i.method, i.note or ""]
            for name, (value, i) in shown.items()
        ),
    )
    return "\n".join([title, "", legend([i for _, i in shown.values()]), "", body])


def error_bars(values: Sequence[float | None], intervals: Sequence[Interval | None]) -> list[list[float]]:
    """Matplotlib's asymmetric ``yerr`` (below, above) from the intervals; 0 where there is none."""
    below, above = [], []
    for value, interval in zip(values, intervals):
        if value is None or interval is None or interval.low is None or interval.high is None:  # not defined
            below.append(0.0)
            above.append(0.0)
        else:
            below.append(max(0.0, value - interval.low))
            above.append(max(0.0, interval.high - value))
    return [below, above]


def label_n(ax, bars, values: Sequence[float | None], intervals: Sequence[Interval | None]) -> None:
    """Write ``n=…`` (the interval's units) above each bar, past the top of its error bar."""
    for bar, value, interval in zip(bars, values, intervals):
        if interval is None or value is None:  # no bar: nothing was measured to count
            continue
        top = max(v for v in (value, interval.high, 0.0) if v is not None)
        ax.annotate(f"n={interval.n}", (bar.get_x() + bar.get_width() / 2, top), xytext=(0, 2), textcoords="offset points",
                    ha="center", va="bottom", fontsize=6)
    ax.margins(y=0.12)  # room above the highest label


def ci_headers(labels: Sequence[str]) -> list[str]:
    """The headers of the columns ``ci_cells`` fills: one 95% CI per metric, then n."""
    return [f"95% CI {label}" for label in labels] + ["n"]


def ci_cells(intervals: Mapping[str, Interval] | None, metrics: Sequence[str]) -> list[str]:
    """Each metric's ``[low, high]`` and the units' n with their name (empty cells without intervals)."""
    found = [pick(intervals, m) for m in metrics]
    first = next((i for i in found if i is not None), None)
    return [bounds(i) for i in found] + ["" if first is None else f"{first.n} {first.unit}s"]


def any_intervals(blocks: Sequence[Mapping[str, Interval] | None]) -> bool:
    return any(b for b in blocks)


def table_legend(blocks: Sequence[Mapping[str, Interval] | None]) -> str:
    """The legend of the intervals in a table, as a paragraph after it ("" when the table has none)."""
    text = legend([i for b in blocks if b for i in b.values()])
    return f"\n\n{text}" if text else ""


LIBRA_NAMES = {"lms": "LMS", "ss": "SS", "icat_local": "local iCAT", "jsd": "JSD", "eicat": "EiCAT"}


def libra_uncertainty(scores: LibraScoresBlock) -> str:
    """LIBRA's overall scores with their intervals over triplets (a ``LibraScoresBlock``); "" without intervals."""
    section = uncertainty_section(
        {label: (getattr(scores, key), pick(scores.intervals, key)) for key, label in LIBRA_NAMES.items()},
        title="### Uncertainty",
        digits=2,
    )
    return f"\n\n{section}" if section else ""
