"""Bootstrap confidence intervals over resampling units, with scipy.stats.bootstrap.

A metric is given as a *statistic of unit indices*: a function from an integer
array of shape ``(..., k)`` (the indices of k resampled units, any leading
batch dimensions) to the metric of those units, shape ``(...)``. scipy
resamples the indices ``0..n-1``; the statistic gathers whatever each unit
carries (answer tallies, PPLs, task scores), so one routine serves every
protocol and stays vectorised: a default run is not slowed by a Python loop
over resamples.

Degenerate inputs never raise: an undefined metric, fewer than two units or a
statistic that every resample gives the same value of yield an interval with a
``note`` saying so (null bounds, or bounds equal to the point). Where every
resample gives the same value and the caller knows what the metric is (a
proportion, a difference of proportions: ``edges``), the zero-width interval is
replaced by a score interval that accounts for n (``EdgeRule``,
``domain/uncertainty/score.py``); the note says so. BCa needs a
jackknife (n evaluations) and fails on degenerate distributions: above
``bca_max_n`` units, or where BCa gives no finite bounds, the percentile
interval is used and the note says so.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Sequence, TypedDict

import numpy as np
from scipy import stats

from culturebias.domain.array_types import Floats, FloatsLike, Indices
from culturebias.domain.uncertainty.interval import DEFAULT_LEVEL, DEFAULT_RESAMPLES, Interval, ScoreMethod

if TYPE_CHECKING:
    from typing_extensions import Unpack

# Unit indices (..., k) to the metric of those units (...), as the module doc says.
StatisticOfUnits = Callable[[Indices], Floats]



@dataclass(frozen=True)
class EdgeInterval:
    """A score interval standing in for a zero-width bootstrap one; ``note`` names the method's n."""

    low: float
    high: float
    method: ScoreMethod
    note: str


# (the reported point, the level) to the score interval of a metric whose every resample agrees; None: none known.
EdgeRule = Callable[[float, float], "EdgeInterval | None"]
ZERO_WIDTH = "every resample gives the same value: zero width"

# BCa's jackknife costs n statistic evaluations of n-1 units each: quadratic in n.
BCA_MAX_N = 5000
# Index elements one statistic call may gather (times the caller's per-unit width): bounds memory.
_BATCH_ELEMENTS = 4_000_000


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


class _Base(TypedDict):
    """The fields every interval of one call shares."""

    level: float
    n: int
    unit: str
    resamples: int
    seed: int


class IntervalOptions(TypedDict, total=False):
    """What ``unit_interval`` and ``mean_interval`` pass on to ``unit_intervals``."""

    resamples: int
    level: float
    bca_max_n: int
    width: int


def unit_intervals(
    statistic: StatisticOfUnits,
    n: int,
    names: Sequence[str],
    *,
    unit: str,
    seed: int,
    points: Mapping[str, float | None] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    bca_max_n: int = BCA_MAX_N,
    width: int = 1,
    edges: Mapping[str, EdgeRule] | None = None,
) -> dict[str, Interval]:
    """The ``level`` bootstrap interval of each of several metrics over the same ``n`` units and resamples.

    ``statistic`` returns one row per name: shape ``(len(names), ...)``. ``points``
    holds the values the summary reports; the statistic must reproduce each on
    the full data, else that interval is left undefined (a statistic that does
    not compute the reported metric must not lend it an interval). ``width`` is
    how many numbers one unit carries (it bounds memory per batch). ``edges``: per
    name, the score interval to use where every resample gives the same value.
    """
    points = points or {}
    base: _Base = {"level": level, "n": n, "unit": unit, "resamples": resamples, "seed": seed}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        own = np.asarray(statistic(np.arange(n)), dtype=float).reshape(len(names)) if n else np.full(len(names), np.nan)
    out: dict[str, Interval] = {}
    for j, name in enumerate(names):
        reported = points.get(name)
        if reported is not None and _finite(reported) and not (_finite(own[j]) and math.isclose(own[j], reported, rel_tol=1e-9, abs_tol=1e-12)):
            out[name] = Interval(low=None, high=None, method="none", note=f"statistic gives {own[j]}, not the reported {reported}", **base)
        elif not _finite(own[j]):
            out[name] = Interval(low=None, high=None, method="none", note="the metric is undefined on these units", **base)
        elif n < 2:
            out[name] = Interval(low=own[j], high=own[j], method="none", note="fewer than two units: nothing to resample", **base)
    todo = [j for j, name in enumerate(names) if name not in out]
    if not todo:
        return {name: out[name] for name in names}

    method = "BCa" if n <= bca_max_n else "percentile"
    batch = max(1, min(resamples, _BATCH_ELEMENTS // max(1, n * width)))

    def indexed(idx: Indices, axis: int = -1) -> Floats:
        values = np.asarray(statistic(np.moveaxis(np.asarray(idx, dtype=np.intp), axis, -1)), dtype=float)
        return values[todo]

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # scipy warns on degenerate data; the checks below report it
        result = stats.bootstrap(
            (np.arange(n),),
            indexed,
            n_resamples=resamples,
            batch=batch,
            vectorized=True,
            axis=-1,
            confidence_level=level,
            method=method,
            rng=np.random.default_rng(seed),
        )
    distributions = np.asarray(result.bootstrap_distribution, dtype=float).reshape(len(todo), -1)
    lows = np.asarray(result.confidence_interval.low, dtype=float).reshape(len(todo))
    highs = np.asarray(result.confidence_interval.high, dtype=float).reshape(len(todo))
    for row, j in enumerate(todo):
        found = _from_distribution(distributions[row], lows[row], highs[row], float(own[j]), method, n, bca_max_n, level, base)
        rule = (edges or {}).get(names[j])
        out[names[j]] = _at_edge(found, rule, float(own[j])) if rule is not None and found.zero_width_resampling else found
    return {name: out[name] for name in names}


def _from_distribution(
    distribution: Floats, low: float, high: float, point: float, method: str, n: int, bca_max_n: int, level: float, base: _Base
) -> Interval:
    finite = distribution[np.isfinite(distribution)]
    notes: list[str] = []
    if finite.size < distribution.size:
        notes.append(f"{distribution.size - finite.size} of {distribution.size} resamples leave the metric undefined")
    if finite.size == 0:
        return Interval(low=None, high=None, method="none", note="; ".join(notes), **base)
    if np.ptp(finite) == 0:
        notes.append(ZERO_WIDTH)
        return Interval(low=point, high=point, method="none", note="; ".join(notes), **base)
    if not (_finite(low) and _finite(high)) or finite.size < distribution.size:
        if method == "BCa":
            notes.append("BCa undefined on these data: percentile interval")
        method = "percentile"
        alpha = (1 - level) / 2
        low, high = (float(v) for v in np.percentile(finite, [100 * alpha, 100 * (1 - alpha)]))
    elif n > bca_max_n:
        notes.append(f"percentile interval: BCa's jackknife is skipped above {bca_max_n} units")
    return Interval(low=float(low), high=float(high), method=method, note="; ".join(notes) or None, **base)


def _at_edge(found: Interval, rule: EdgeRule, point: float) -> Interval:
    """The score interval of ``rule`` in place of a zero-width one (widened to hold the point); ``found`` without one."""
    edge = rule(point, found.level)
    if edge is None:
        return found
    note = found.note.replace(ZERO_WIDTH, "every resample gives the same value") if found.note else "every resample gives the same value"
    return found.model_copy(update={
        "low": min(edge.low, point), "high": max(edge.high, point), "method": edge.method, "note": f"{note}: {edge.note}",
    })


def unit_interval(
    statistic: StatisticOfUnits, n: int, *, unit: str, seed: int, point: float | None = None, **options: Unpack[IntervalOptions]
) -> Interval:
    """The interval of one metric: ``statistic`` maps unit indices ``(..., k)`` to values ``(...)``."""
    return unit_intervals(
        lambda idx: np.asarray(statistic(idx))[None], n, ("value",), unit=unit, seed=seed, points={"value": point}, **options
    )["value"]


def mean_interval(values: FloatsLike, *, unit: str, seed: int, point: float | None = None, **options: Unpack[IntervalOptions]) -> Interval:
    """The interval of the mean of one number per unit."""
    data = np.asarray(values, dtype=float)
    return unit_interval(lambda idx: data[idx].mean(axis=-1), data.size, unit=unit, seed=seed, point=point, **options)
