"""McBE's headline metric: the overall score, the mean of the five task scores (higher = less bias)."""

from __future__ import annotations

from culturebias.domain.headlines import HeadlineMetric, Planning

HEADLINES: tuple[HeadlineMetric, ...] = (
    HeadlineMetric(
        name="overall",
        label="overall McBE score",
        value="metrics.overall",
        interval="metrics.intervals.overall",
        direction="higher",
        low=0.0,
        high=100.0,
        planning=Planning(sd=20.0, margin=5.0, source="one BEI's score spread: sd 20 points (the per-BEI spread of "
                          "the task scores in the reference runs, 2 to 20; the largest is 50), d 5 points"),
        meaning="the mean of the five task scores, each a mean over categories; 100 shows no bias",
    ),
)
