"""Each pair of compared runs on each headline: the paired difference, its interval and p-value, and the ranking.

The difference is paired over the resampling units both runs share (the same templates, triplets):
one bootstrap draw of units serves both runs, so what the two runs have in common cancels. It is
taken on the metric's distance from ideal (``HeadlineMetric.badness``), so that for every
direction a positive difference means the second run is further from ideal; the report shows
it back in the metric's own terms. A run whose per-unit values are not at hand (a benchmark that
declares none, a run given without its item records) is compared on its point value only, and
the pair says why it was not tested.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import Field

from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.policy.paired import UnitValues, paired_statistic
from culturebias.domain.summary import Block
from culturebias.domain.uncertainty.interval import DEFAULT_LEVEL, DEFAULT_RESAMPLES

ALPHA = 0.05
_CHUNK = 100  # resamples drawn at once (bounds the memory of one draw)


class HeadlinePair(Block):
    """Run ``b`` against run ``a`` on one headline metric."""

    metric: str = Field(description="The headline metric's name.")
    a: str = Field(description="Label of the first run.")
    b: str = Field(description="Label of the second run.")
    difference: float | None = Field(
        description="b's distance from ideal minus a's (positive: b is further from ideal); null where undefined."
    )
    low: float | None = Field(default=None, description="Low end of the difference's 95% paired bootstrap interval.")
    high: float | None = Field(default=None, description="High end of the interval.")
    p_value: float | None = Field(default=None, description="Two-sided bootstrap p-value of a zero difference.")
    n: int | None = Field(default=None, description="Resampling units both runs share (the paired sample).")
    unit: str | None = Field(default=None, description="What one resampling unit is (template, triplet).")
    note: str | None = Field(default=None, description="Why the pair was not tested, where it was not.")

    @property
    def significant(self) -> bool | None:
        """Whether the difference is significant at 5%; None where the pair was not tested."""
        return None if self.p_value is None else self.p_value < ALPHA


def paired_pair(
    metric: HeadlineMetric,
    labels: tuple[str, str],
    units: tuple[UnitValues, UnitValues],
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> HeadlinePair:
    """The paired percentile bootstrap of ``badness(b) - badness(a)`` over the units both runs share."""
    a, b = units
    shared, difference = paired_statistic(metric, b, a)

    base = {"metric": metric.name, "a": labels[0], "b": labels[1], "n": len(shared), "unit": a.unit}
    if len(shared) < 2:
        return HeadlinePair(difference=None, note=f"the runs share {len(shared)} {a.unit}(s): nothing to pair", **base)
    point = float(difference(np.arange(len(shared))))
    rng = np.random.default_rng(seed)
    draws = []
    for start in range(0, resamples, _CHUNK):
        size = min(_CHUNK, resamples - start)
        draws.append(difference(rng.integers(0, len(shared), size=(size, len(shared)))))
    distribution = np.concatenate(draws)
    distribution = distribution[np.isfinite(distribution)]
    if not math.isfinite(point) or distribution.size == 0:
        return HeadlinePair(difference=None, note="the metric is undefined on the shared units", **base)
    tail = (1 - level) / 2
    low, high = (float(q) for q in np.quantile(distribution, [tail, 1 - tail]))
    below, above = int(np.sum(distribution <= 0)), int(np.sum(distribution >= 0))
    p_value = min(1.0, 2 * (min(below, above) + 1) / (distribution.size + 1))
    return HeadlinePair(difference=point, low=low, high=high, p_value=p_value, **base)


def untested_pair(metric: HeadlineMetric, labels: tuple[str, str], values: tuple[float | None, float | None], why: str) -> HeadlinePair:
    """A pair compared on its point values only; ``why`` says why it was not tested."""
    a, b = values
    difference = None if a is None or b is None else float(metric.badness(b) - metric.badness(a))
    return HeadlinePair(metric=metric.name, a=labels[0], b=labels[1], difference=difference, note=why)


def ranking(metric: HeadlineMetric, values: Mapping[str, float | None], pairs: Sequence[HeadlinePair]) -> list[list[str]]:
    """Runs from best to worst in tiers: a run joins the tier above unless it is significantly worse than its best run.

    Runs with no value come last, in a tier of their own; an untested pair counts as a tie.
    """
    by_pair = {(p.a, p.b): p for p in pairs if p.metric == metric.name}
    known = sorted((label for label, v in values.items() if v is not None), key=lambda label: metric.badness(values[label]))
    tiers: list[list[str]] = []
    for label in known:
        if tiers:
            head = tiers[-1][0]
            pair = by_pair.get((head, label)) or by_pair.get((label, head))
            if not (pair is not None and pair.significant):
                tiers[-1].append(label)
                continue
        tiers.append([label])
    missing = [label for label, v in values.items() if v is None]
    return tiers + ([missing] if missing else [])
