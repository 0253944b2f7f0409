"""McBE's headline metric: the overall score, the mean of the five task scores (higher = less bias)."""

from __future__ import annotations

from culturebias.domain.headlines import HeadlineMetric

HEADLINES: tuple[HeadlineMetric, ...] = (
    HeadlineMetric(
        name="overall",
        label="overall McBE score",
        value="metrics.overall",
        interval="metrics.intervals.overall",
        direction="higher",
        low=0.0,
        high=100.0,
        meaning="the mean of the five task scores, each a mean over categories; 100 shows no bias",
    ),
)
