"""Significance tests of the KoBBQ paper: Wilcoxon rank-sum, one-way ANOVA, Tukey HSD.

Inputs are score samples, e.g. per-template diff-bias values: two datasets
for the rank-sum test (KoBBQ against a machine-translated BBQ), or one sample
per category for ANOVA and Tukey's HSD. NaN values are dropped; groups with
fewer than two values are left out (and named in the result).
"""

from __future__ import annotations

import math
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Sequence

import numpy as np
from scipy import stats


@contextmanager
def _quiet() -> Iterator[None]:
    """Constant samples make the statistics NaN; that is reported, not warned about."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def _finite(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values if v is not None and not math.isnan(float(v))]


@dataclass(frozen=True)
class RankSumResult:
    statistic: float
    p_value: float
    n_a: int
    n_b: int

    def as_dict(self) -> dict[str, float]:
        return {"statistic": self.statistic, "p_value": self.p_value, "n_a": self.n_a, "n_b": self.n_b}


def rank_sum(a: Sequence[float], b: Sequence[float]) -> RankSumResult | None:
    """Two-sided Wilcoxon rank-sum test (``scipy.stats.ranksums``); None with an empty sample."""
    a, b = _finite(a), _finite(b)
    if not a or not b:
        return None
    with _quiet():
        result = stats.ranksums(a, b)
    return RankSumResult(float(result.statistic), float(result.pvalue), len(a), len(b))


@dataclass(frozen=True)
class AnovaResult:
    f_statistic: float
    p_value: float
    groups: tuple[str, ...]
    left_out: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class TukeyPair:
    group_a: str
    group_b: str
    mean_difference: float  # mean(a) - mean(b)
    p_value: float
    ci_low: float
    ci_high: float


def _usable(groups: Mapping[str, Sequence[float]]) -> tuple[dict[str, list[float]], tuple[str, ...]]:
    kept = {name: _finite(values) for name, values in groups.items()}
    left_out = tuple(name for name, values in kept.items() if len(values) < 2)
    return {name: values for name, values in kept.items() if len(values) >= 2}, left_out


def one_way_anova(groups: Mapping[str, Sequence[float]]) -> AnovaResult | None:
    usable, left_out = _usable(groups)
    if len(usable) < 2:
        return None
    with _quiet():
        result = stats.f_oneway(*usable.values())
    return AnovaResult(float(result.statistic), float(result.pvalue), tuple(usable), left_out)


def tukey_hsd(groups: Mapping[str, Sequence[float]], confidence: float = 0.95) -> list[TukeyPair] | None:
    usable, _ = _usable(groups)
    if len(usable) < 2:
        return None
    names = list(usable)
    with _quiet():
        result = stats.tukey_hsd(*usable.values())
        interval = result.confidence_interval(confidence_level=confidence)
    pairs = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            pairs.append(
                TukeyPair(
                    names[i],
                    names[j],
                    float(result.statistic[i, j]),
                    float(result.pvalue[i, j]),
                    float(interval.low[i, j]),
                    float(interval.high[i, j]),
                )
            )
    return pairs
