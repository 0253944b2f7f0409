"""LIBRA's headline metrics: the local iCAT and EiCAT (0–100, higher is better)."""

from __future__ import annotations

from culturebias.domain.headlines import HeadlineMetric, Planning

# `plan --policy`: iCAT and EiCAT are built from shares of triplets (lms, ss, x 100): one triplet's spread is at most
# 50 points, which the plan takes (conservative); d 5 points.
_TRIPLET = Planning(sd=50.0, margin=5.0, source="one triplet's spread of a share x 100: sd 50 (the largest), d 5 points")

HEADLINES: tuple[HeadlineMetric, ...] = (
    HeadlineMetric(
        name="icat_local",
        label="iCAT of the local triplets",
        value="metrics.overall.icat_local",
        interval="metrics.overall.intervals.icat_local",
        direction="higher",
        low=0.0,
        high=100.0,
        planning=_TRIPLET,
        meaning="language-modelling skill combined with closeness of SS to 50 (an unbiased, capable model scores 100)",
    ),
    HeadlineMetric(
        name="eicat",
        label="EiCAT",
        value="metrics.overall.eicat",
        interval="metrics.overall.intervals.eicat",
        direction="higher",
        low=0.0,
        high=100.0,
        planning=_TRIPLET,
        meaning="iCAT extended by the knowledge boundary and the JSD of the likelihoods",
    ),
)
