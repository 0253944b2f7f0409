"""Intervals of LIBRA's headline scores; the resampling unit is the (valid) triplet.

lms, ss and JSD are computed on the valid triplets, so those are resampled,
each with its three likelihoods. bbs is a score over local *words*, not
triplets: it is held at the run's value (the interval of EiCAT is conditional
on the run's knowledge-boundary verdicts, and says so). JSD rebins every
resample on its own shared edges, as the metric does, so its statistic loops
over resamples (a few thousand histograms: well under a second).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from typing import Sequence

import numpy as np

from culturebias.domain.array_types import Floats, Indices
from culturebias.domain.libra.metrics import Bins, TripletLikelihood, eicat, icat, jensen_shannon_divergence
from culturebias.domain.libra.summary import LibraScoresBlock
from culturebias.domain.uncertainty.bootstrap import EdgeRule, unit_intervals
from culturebias.domain.uncertainty.edges import proportion_edge
from culturebias.domain.uncertainty.interval import DEFAULT_RESAMPLES, Interval

UNIT = "triplet"
HEADLINES = ("lms", "ss", "icat_local", "jsd", "eicat")
BBS_HELD = "bbs (a score over local words) held at the run's value"


def libra_statistic(bbs: float | None, alpha: float | None, bins: Bins) -> Callable[[Floats], Floats]:
    """lms, ss, icat_local, jsd and eicat of chosen triplets ``(..., k, 3)``: each one's L(S), L(S_p), L(S_u)."""
    bbs_value = float("nan") if bbs is None else float(bbs)

    def statistic(chosen: np.ndarray) -> np.ndarray:
        s, a, u = chosen[..., 0], chosen[..., 1], chosen[..., 2]
        lms = 100.0 * (np.maximum(s, a) > u).mean(axis=-1)
        ss = 100.0 * (s > a).mean(axis=-1)
        flat_a, flat_s = a.reshape(-1, a.shape[-1]), s.reshape(-1, s.shape[-1])
        jsd = np.asarray(
            [100.0 * jensen_shannon_divergence(x, y, bins=bins).value for x, y in zip(flat_a, flat_s)], dtype=float
        ).reshape(a.shape[:-1])
        i = np.vectorize(icat, otypes=[float])(lms, ss)
        e = np.vectorize(lambda a_, b_: eicat(a_, b_, bbs_value, alpha), otypes=[float])(lms, jsd)
        return np.stack([lms, ss, i, jsd, e])

    return statistic


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
    triplets = np.stack([np.asarray(v, dtype=float) for v in (stereotyped, anti_stereotyped, unrelated)], axis=-1)
    of_triplets = libra_statistic(bbs, alpha, bins)

    def statistic(idx: Indices) -> Floats:
        return of_triplets(triplets[idx])

    edges: dict[str, EdgeRule] = {}
    for name, what in (("lms", "triplets with a meaningful sentence above the unrelated one"), ("ss", "stereotyped over anti-stereotyped triplets")):
        rule = proportion_edge(float(len(triplets)), UNIT, scale=100.0, what=what)
        if rule is not None:
            edges[name] = rule
    out = unit_intervals(statistic, len(triplets), HEADLINES, unit=UNIT, seed=seed, points=points, resamples=resamples, edges=edges)
    eicat_interval = out["eicat"]
    if eicat_interval.defined:
        eicat_interval.note = "; ".join(filter(None, [eicat_interval.note, BBS_HELD]))
    return out


def attach_libra(
    block: LibraScoresBlock, likelihoods: Sequence[TripletLikelihood], keep: Sequence[bool], *, alpha: float | None, bins: Bins, seed: int, resamples: int
) -> None:
    """Set ``block.intervals`` (a ``LibraScoresBlock``) from its valid triplets' likelihoods."""
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


def attach_libra_breakdown(
    blocks: Mapping[str, LibraScoresBlock],
    members: Mapping[str, Sequence[int]],
    likelihoods: Sequence[TripletLikelihood],
    keep: Sequence[bool],
    *,
    alpha: float | None,
    bins: Bins,
    seed: int,
    resamples: int,
) -> None:
    """Intervals on each block of a breakdown (category or group): ``members`` names each block's triplets by
    their index in ``likelihoods``; a block resamples its own valid triplets, with its own bbs held."""
    for name, block in blocks.items():
        rows = members.get(name, ())
        attach_libra(
            block, [likelihoods[i] for i in rows], [keep[i] for i in rows],
            alpha=alpha, bins=bins, seed=seed, resamples=resamples,
        )
