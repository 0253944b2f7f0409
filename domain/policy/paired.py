"""The paired non-inferiority test of a run against its baseline, over the resampling units both share.

A benchmark that can give a headline's per-unit data declares ``unit_values``
on its descriptor: for a run (its summary and, where kept, its item records)
the units' ids, what each unit carries (answer tallies, likelihoods) and the
statistic that recomputes the headline from any resample of units. The test
resamples the units both runs share, the same draw for both, and bootstraps
the difference of their distances from ideal (``HeadlineMetric.badness``:
positive means this run is worse). The statistic must reproduce the reported
headline on each run's own units, else it would test another number than the
one reported: the caller then declares the criterion inconclusive.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.uncertainty.bootstrap import unit_intervals
from culturebias.domain.uncertainty.interval import DEFAULT_RESAMPLES, Interval


class NoUnitValues(Exception):
    """A run (or its benchmark) keeps no per-unit values of a headline; ``reason`` says why, in words."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True)
class UnitValues:
    """One run's per-unit data of one headline.

    ``values[i]`` is what unit ``ids[i]`` carries (any shape, the same for every unit);
    ``statistic(values[idx])`` maps the units of a resample, shape ``(..., k, *unit shape)``,
    to the headline, shape ``(...)`` (vectorised over leading batch dimensions). ``weights`` (optional):
    the headline is the ``weights``-weighted mean of the units' own values (``statistic`` of one unit).
    """

    unit: str
    ids: tuple[str, ...]
    values: np.ndarray
    statistic: Callable[[np.ndarray], np.ndarray]
    # Each unit's weight where the headline is a pooled ratio (the weighted mean of the units' own values,
    # e.g. a template's answers): what ``check --sequential``'s confidence sequence weighs by. None: equal weights.
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        if len(self.ids) != len(self.values):
            raise ValueError(f"{len(self.ids)} unit ids for {len(self.values)} units")
        if len(set(self.ids)) != len(self.ids):
            raise ValueError("unit ids must be unique")

    def value(self, positions: np.ndarray | None = None) -> float:
        chosen = self.values if positions is None else self.values[positions]
        with np.errstate(all="ignore"):
            return float(np.asarray(self.statistic(chosen)))


# ``unit_values(summary, records, metric, breakdown) -> UnitValues``; raises NoUnitValues.
# ``records`` are the run's stored item records (None where the run's store is not at hand).
UnitValuesOf = Callable[[Any, Sequence[Any] | None, HeadlineMetric, "str | None"], UnitValues]  # Any: JSON values


def reproduces(units: UnitValues, reported: float | None) -> str | None:
    """None when the units' statistic gives the reported value; otherwise why not, in words."""
    own = units.value()
    if reported is None or not math.isfinite(own):
        return f"its per-{units.unit} values give {own}, the summary {reported}"
    if not math.isclose(own, reported, rel_tol=1e-9, abs_tol=1e-12):
        return f"its per-{units.unit} values give {own:.6g}, not the reported {reported:.6g}"
    return None


@dataclass(frozen=True)
class PairedDifference:
    """This run's distance from ideal minus the baseline's, on the shared units (positive: worse)."""

    point: float
    interval: Interval
    shared: int
    only_in_run: int
    only_in_baseline: int


def paired_statistic(
    metric: HeadlineMetric, run: UnitValues, baseline: UnitValues
) -> tuple[list[str], Callable[[np.ndarray], np.ndarray]]:
    """The units both runs share, and ``badness(run) - badness(baseline)`` of a resample of them (positions)."""
    position_in_baseline = {unit: i for i, unit in enumerate(baseline.ids)}
    shared = [unit for unit in run.ids if unit in position_in_baseline]
    position_in_run = {unit: i for i, unit in enumerate(run.ids)}
    run_at = np.array([position_in_run[u] for u in shared], dtype=np.intp)
    base_at = np.array([position_in_baseline[u] for u in shared], dtype=np.intp)

    def difference(idx: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            ours = run.statistic(run.values[run_at[idx]])
            theirs = baseline.statistic(baseline.values[base_at[idx]])
            return np.asarray(metric.badness(ours) - metric.badness(theirs), dtype=float)

    return shared, difference


def paired_difference(
    metric: HeadlineMetric,
    run: UnitValues,
    baseline: UnitValues,
    *,
    level: float,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
) -> PairedDifference:
    """The paired bootstrap interval of ``badness(run) - badness(baseline)`` over the units both share."""
    shared, difference = paired_statistic(metric, run, baseline)

    width = 2 * max(1, int(np.prod(run.values.shape[1:])))
    interval = unit_intervals(
        lambda idx: difference(idx)[None],
        len(shared),
        ("difference",),
        unit=run.unit,
        seed=seed,
        resamples=resamples,
        level=level,
        width=width,
    )["difference"]
    point = float(difference(np.arange(len(shared)))) if shared else float("nan")
    return PairedDifference(
        point=point,
        interval=interval,
        shared=len(shared),
        only_in_run=len(run.ids) - len(shared),
        only_in_baseline=len(baseline.ids) - len(shared),
    )


def _badness_bounds(metric: HeadlineMetric, interval: Interval) -> tuple[float, float] | None:
    """The distance from ideal over a stored interval: (lowest, highest) badness it allows."""
    if interval.low is None or interval.high is None:
        return None
    low, high = interval.low, interval.high
    if metric.direction != "closer":
        ends = sorted((float(metric.badness(low)), float(metric.badness(high))))
        return ends[0], ends[1]
    assert metric.target is not None
    t = metric.target
    nearest = 0.0 if low <= t <= high else min(abs(low - t), abs(high - t))
    return nearest, max(abs(low - t), abs(high - t))


def edge_difference(
    metric: HeadlineMetric, difference: PairedDifference, run: Interval | None, baseline: Interval | None,
    run_value: float | None, baseline_value: float | None,
) -> PairedDifference:
    """A zero-width paired interval (every resample gives the same difference) replaced by the MOVER of the two
    runs' own stored intervals (their score intervals where these sat at an edge): conservative, as it ignores the
    pairing. ``difference`` as it is where it has width or either run lacks a usable interval."""
    from culturebias.domain.uncertainty.score import mover

    interval = difference.interval
    if not interval.zero_width_resampling or run is None or baseline is None or run_value is None or baseline_value is None:
        return difference
    if run.zero_width_resampling or baseline.zero_width_resampling or abs(run.level - interval.level) > 1e-9 \
            or abs(baseline.level - interval.level) > 1e-9:
        return difference
    ours, theirs = _badness_bounds(metric, run), _badness_bounds(metric, baseline)
    if ours is None or theirs is None:
        return difference
    a, b = float(metric.badness(run_value)), float(metric.badness(baseline_value))
    low, high = mover([(1.0, a, min(ours[0], a), max(ours[1], a)), (-1.0, b, min(theirs[0], b), max(theirs[1], b))])
    low, high = min(low, difference.point), max(high, difference.point)
    note = (f"{interval.note}; the MOVER of the two runs' own intervals ({run.method}, {baseline.method}) instead: "
            "conservative, it ignores the pairing")
    method = "MOVER-Wilson" if {run.method, baseline.method} & {"Wilson", "Newcombe", "Newcombe-paired", "MOVER-Wilson"} else None
    if method is None:
        return difference
    return dataclasses.replace(difference, interval=interval.model_copy(update={"low": low, "high": high, "method": method, "note": note}))
