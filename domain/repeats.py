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

from pydantic import BaseModel, ConfigDict, Field

STD_DDOF = 1


class _Block(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RepeatRun(_Block):
    """One repeat: its 0-based index, its sampling seed (what every sampled generation of it used), its headline."""

    index: int = Field(description="the repeat's number, 0-based")
    seed: int = Field(description="the sampling seed of this repeat (run.seed + index)")
    headline: dict[str, float | None] = Field(
        description="this repeat's headline metrics by name (those of culturebias runs); null where undefined",
    )


class RepeatStat(_Block):
    mean: float | None = Field(
        None,
        description="the metric's mean over the repeats that define it; null when none does",
    )
    std: float | None = Field(
        None,
        description="its sample standard deviation (ddof std_ddof); null when fewer than two repeats define it",
    )
    n: int = Field(description="how many repeats define the metric")


class RepeatsBlock(_Block):
    n: int = Field(description="how many times the benchmark ran in this run (run.repeats)")
    sampling: str = Field(description='how the repeats decoded, e.g. "greedy" or "sample (temperature=0.7, ...)"')
    std_ddof: int = Field(STD_DDOF, description="the ddof of the standard deviations (1: sample)")
    metrics_from: int = Field(0, description="the repeat whose metrics, counts and details the summary holds")
    runs: list[RepeatRun] = Field(description="each repeat's seed and headline metrics")
    headline: dict[str, RepeatStat] = Field(description="per headline metric: mean, std and n over the repeats")


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
