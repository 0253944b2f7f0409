"""Intervals of LIBRA's headline scores; the resampling unit is the (valid) triplet.

lms, ss and JSD are computed on the valid triplets, so those are resampled,
each with its three likelihoods. bbs is a score over local *words*, not
triplets: it is held at the run's value (the interval of EiCAT is conditional
on the run's knowledge-boundary verdicts, and says so). JSD rebins every
resample on its own shared edges, as the metric does, so its statistic loops
over resamples (a few thousand histograms: well under a second).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from culturebias.domain.array_types import Floats, Indices
from culturebias.domain.libra.metrics import Bins, TripletLikelihood, eicat, icat, jensen_shannon_divergence
from culturebias.domain.libra.summary import LibraScoresBlock
from culturebias.domain.uncertainty.bootstrap import unit_intervals
from culturebias.domain.uncertainty.interval import DEFAULT_RESAMPLES, Interval

UNIT = "triplet"
HEADLINES = ("lms", "ss", "icat_local", "jsd", "eicat")
BBS_HELD = "bbs (a score over local words) held at the run's value"


def libra_intervals(
    stereotyped: Sequence[float],
    anti_stereotyped: Sequence[float],
    unrelated: Sequence[float],
    points: dict[str, float | None],
    *,
    bbs: float | None,
    alpha: float | None,
    bins: Bins,
    seed: int,
    resamples: int = DEFAULT_RESAMPLES,
) -> dict[str, Interval]:
    """lms, ss, icat_local, jsd and eicat over resampled valid triplets (their L(S), L(S_p), L(S_u))."""
    s, a, u = (np.asarray(v, dtype=float) for v in (stereotyped, anti_stereotyped, unrelated))
    meaningful = (np.maximum(s, a) > u).astype(float)
    stereotype = (s > a).astype(float)
    bbs_value = float("nan") if bbs is None else float(bbs)

    def lms(idx: Indices) -> Floats:
        share: Floats = meaningful[idx].mean(axis=-1)
        return 100.0 * share

    def ss(idx: Indices) -> Floats:
        share: Floats = stereotype[idx].mean(axis=-1)
        return 100.0 * share

    def jsd(idx: Indices) -> Floats:
        flat = idx.reshape(-1, idx.shape[-1])
        values = [100.0 * jensen_shannon_divergence(a[row], s[row], bins=bins).value for row in flat]
        return np.asarray(values, dtype=float).reshape(idx.shape[:-1])

    def statistic(idx: Indices) -> Floats:
        l, s_ = lms(idx), ss(idx)
        j = jsd(idx)
        i = np.vectorize(icat, otypes=[float])(l, s_)
        e = np.vectorize(lambda a_, b_: eicat(a_, b_, bbs_value, alpha), otypes=[float])(l, j)
        return np.stack([l, s_, i, j, e])

    out = unit_intervals(statistic, s.size, HEADLINES, unit=UNIT, seed=seed, points=points, resamples=resamples)
    eicat_interval = out["eicat"]
    if eicat_interval.defined:
        eicat_interval.note = "; ".join(filter(None, [eicat_interval.note, BBS_HELD]))
    return out


def attach_libra(
    block: LibraScoresBlock, likelihoods: Sequence[TripletLikelihood], keep: Sequence[bool], *, alpha: float | None, bins: Bins, seed: int, resamples: int
) -> None:
    """Set ``block.intervals`` (the overall ``LibraScoresBlock``) from the valid triplets' likelihoods."""
    if resamples <= 0:
        return
    kept = [t for t, k in zip(likelihoods, keep) if k]
    points = {name: getattr(block, name) for name in HEADLINES}
    block.intervals = libra_intervals(
        [t.stereotyped for t in kept],
        [t.anti_stereotyped for t in kept],
        [t.unrelated for t in kept],
        points,
        bbs=block.bbs,
        alpha=alpha,
        bins=bins,
        seed=seed,
        resamples=resamples,
    )
