"""A run executed ``run.repeats`` times: each repeat's headline metrics and their mean ± std.

The summary's ``metrics``, ``counts`` and ``details`` are those of the first repeat
(seed ``s``: the numbers a single run with that seed gives); ``repeats`` adds every
repeat's headline metrics (``domain.leaderboard.headline``) and, per metric, the mean
and the sample standard deviation (ddof 1) over the repeats where it is defined.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

STD_DDOF = 1


class _Block(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RepeatRun(_Block):
    """One repeat: its 0-based index, its sampling seed (what every sampled generation of it used), its headline."""

    index: int
    seed: int
    headline: dict[str, float | None]


class RepeatStat(_Block):
    mean: float | None = None
    std: float | None = None  # None: fewer than two repeats define the metric
    n: int  # repeats in which the metric is defined


class RepeatsBlock(_Block):
    n: int
    sampling: str  # how the repeats decoded, e.g. "greedy" or "sample (temperature=0.7, ...)"
    std_ddof: int = STD_DDOF
    metrics_from: int = 0  # the repeat whose metrics, counts and details the summary holds
    runs: list[RepeatRun]
    headline: dict[str, RepeatStat]


def _finite(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def repeat_stat(values: Sequence[float | None]) -> RepeatStat:
    defined = [v for v in (_finite(v) for v in values) if v is not None]
    if not defined:
        return RepeatStat(n=0)
    std = statistics.stdev(defined) if len(defined) > STD_DDOF else None
    return RepeatStat(mean=statistics.fmean(defined), std=std, n=len(defined))


def repeats_block(sampling: str, seeds: Sequence[int], headlines: Sequence[Mapping[str, float | None]]) -> RepeatsBlock:
    names = list(dict.fromkeys(name for h in headlines for name in h))
    runs = [
        RepeatRun(index=i, seed=seed, headline={k: _finite(v) for k, v in h.items()})
        for i, (seed, h) in enumerate(zip(seeds, headlines))
    ]
    stats = {name: repeat_stat([h.get(name) for h in headlines]) for name in names}
    return RepeatsBlock(n=len(runs), sampling=sampling, runs=runs, headline=stats)
