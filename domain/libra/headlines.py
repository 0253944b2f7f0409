"""LIBRA's headline metrics: the local iCAT and EiCAT (0–100, higher is better)."""

from __future__ import annotations

from culturebias.domain.headlines import HeadlineMetric

HEADLINES: tuple[HeadlineMetric, ...] = (
    HeadlineMetric(
        name="icat_local",
        label="iCAT of the local triplets",
        value="metrics.overall.icat_local",
        interval="metrics.overall.intervals.icat_local",
        direction="higher",
        low=0.0,
        high=100.0,
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
        meaning="iCAT extended by the knowledge boundary and the JSD of the likelihoods",
    ),
)
