"""A metric's value and its interval as one cell: "0.341 [0.279, 0.393]", the rest of its block in small print.

A summary (or a comparison) stores a value and its interval apart: ``{acc_amb: {mean, std, n_prompts,
per_prompt}, intervals: {acc_amb: {low, high, level, n, unit, method, ...}}}``. ``fold`` joins them
into one ``Measure`` per metric (and reads a mean over prompts as one), so a table shows a row per
metric instead of a row named ``intervals`` and columns named ``accuracy ambiguous: low``. Every
number stays on the page, each carried in a ``data-v`` attribute.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from culturebias.adapters.reports.html.page import text
from culturebias.adapters.reports.words import prose, words

STAT_KEYS = {"mean", "std", "n_prompts", "per_prompt", "n", "min", "max"}


@dataclass(frozen=True)
class Measure:
    """One metric of one model: its value, its interval (where one is stored) and the small print."""

    value: Any = None  # Any: a JSON number, or None where only an interval is stored
    low: float | None = None
    high: float | None = None
    extra: list[tuple[str, Any]] = field(default_factory=list)  # Any: (words, a JSON number or text)


def is_interval(value: object) -> bool:
    return isinstance(value, Mapping) and "low" in value and "high" in value and ("level" in value or "method" in value)


def is_stat(value: object) -> bool:
    """A mean over prompts with its spread (``PromptStats``)."""
    return isinstance(value, Mapping) and "mean" in value and set(value) <= STAT_KEYS


def _interval_extra(interval: Mapping[str, Any]) -> list[tuple[str, Any]]:  # Any: JSON values
    return [(k, interval[k]) for k in ("level", "method", "n", "unit", "note") if interval.get(k) not in (None, "")]


def _stat_measure(stat: Mapping[str, Any]) -> Measure:  # Any: JSON values
    return Measure(stat.get("mean"), extra=[(k, v) for k, v in stat.items() if k != "mean" and v is not None])


def _with_interval(base: Any, interval: Mapping[str, Any]) -> Measure:  # Any: a folded value
    scalar = base is None or isinstance(base, (bool, int, float, str))
    measure = base if isinstance(base, Measure) else Measure(base if scalar else None)
    return Measure(measure.value, interval.get("low"), interval.get("high"), [*measure.extra, ("interval", True), *_interval_extra(interval)])


def fold(value: Any) -> Any:  # Any: a block's JSON
    """The block with every interval joined to the value it bounds, and every mean over prompts one ``Measure``."""
    if isinstance(value, list):
        return [fold(v) for v in value]
    if not isinstance(value, Mapping):
        return value
    if is_interval(value):
        return _with_interval(None, value)
    if is_stat(value):
        return _stat_measure(value)
    intervals = value.get("intervals")
    joined = isinstance(intervals, Mapping) and bool(intervals) and all(is_interval(i) for i in intervals.values())
    # the intervals block goes once joined to its values, or where it holds none (a breakdown too small to resample)
    out = {str(k): fold(v) for k, v in value.items() if not (k == "intervals" and (joined or not intervals))}
    if joined and isinstance(intervals, Mapping):
        for key, interval in intervals.items():
            out[str(key)] = _with_interval(out.get(str(key)), interval)
    return out


def num(value: Any, wide: bool) -> str:  # Any: a JSON number
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "–" if value is None else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return "–"
    if value and (abs(value) < 1e-3 or abs(value) >= 1e5):
        return f"{value:.2e}"  # p-values keep their magnitude
    return f"{value:.1f}" if wide or abs(value) >= 10 else f"{value:.3f}"


def _span(value: Any, wide: bool) -> str:  # Any: a JSON number
    exact = repr(value) if isinstance(value, float) else str(value)
    return f'<span data-v="{text(exact)}">{text(num(value, wide))}</span>'


def _units(n: Any, unit: Any) -> str:  # Any: JSON values
    unit = str(unit or "unit")
    plural = unit if n == 1 else (f"{unit}s" if re.fullmatch(r"[A-Za-z -]+", unit) and not unit.endswith("s") else f"{unit} units")
    return f"{_span(n, False)} {text(plural)}"


def _small(extra: list[tuple[str, Any]], wide: bool) -> str:  # Any: JSON numbers or text
    """"± 0.030 over prompts (1: 0.362, 2: 0.319); 95% BCa interval over 27 templates; its note"."""
    got = dict(extra)
    parts = []
    if "std" in got:
        per = got.get("per_prompt")
        each = ", ".join(f"{text(k)}: {_span(v, wide)}" for k, v in per.items()) if isinstance(per, Mapping) else ""
        if "per_prompt" in got or "n_prompts" in got:
            parts.append(f"± {_span(got['std'], wide)} over prompts" + (f" ({each})" if each else ""))
        else:  # a spread over something else (repeated runs' means): its sd and n, not "over prompts"
            parts.append(f"sd {_span(got['std'], wide)}" + (f", n = {_span(got['n'], wide)}" if got.get("n") is not None else ""))
    if "interval" in got:
        level = got.get("level")
        shown = f'<span data-v="{text(repr(level))}">{text(f"{level * 100:g}%")}</span> ' if isinstance(level, float) else ""
        method = f"{text(got['method'])} " if got.get("method") not in (None, "none") else ""
        over = f" over {_units(got['n'], got.get('unit'))}" if got.get("n") is not None else ""
        parts.append(f"{shown}{method}interval{over}")
    if got.get("note"):
        parts.append(text(prose(str(got["note"]))))
    for key, value in extra:
        if key not in ("std", "per_prompt", "interval", "level", "method", "n", "unit", "note", "n_prompts"):
            parts.append(f"{text(words(key))} {_span(value, wide) if isinstance(value, (int, float)) else text(value)}")
    return f'<small class="muted">{"; ".join(parts)}</small>' if parts else ""


def measure_cell(measure: Measure) -> str:
    """"0.341 [0.279, 0.393]" and the small print; sorted by the value."""
    numbers = [v for v in (measure.value, measure.low, measure.high) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    wide = any(abs(v) >= 10 for v in numbers if isinstance(v, float) and math.isfinite(v))
    value = _span(measure.value, wide) if measure.value is not None else ("" if measure.low is not None else "–")
    bounds = f" [{_span(measure.low, wide)}, {_span(measure.high, wide)}]" if measure.low is not None or measure.high is not None else ""
    key = repr(measure.value) if isinstance(measure.value, float) and math.isfinite(measure.value) else (
        str(measure.value) if isinstance(measure.value, int) else ""
    )
    return f'<td class="num measure" data-v="{text(key)}">{value}{bounds.strip() if not value else bounds}{_small(measure.extra, wide)}</td>'


def plain(value: Any) -> Any:  # Any: a folded block
    """A folded block back as JSON with each ``Measure`` as its text (for the shapes ``render_block`` shows)."""
    if isinstance(value, Measure):
        return value.value if value.low is None else f"{num(value.value, False)} [{num(value.low, False)}, {num(value.high, False)}]"
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
