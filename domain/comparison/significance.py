"""Significance marks and the pairs of compared models."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

# The KoBBQ paper's Table 4 marks: *** p < .01, ** p < .05, * p < .1.
LEVELS: tuple[tuple[float, str], ...] = ((0.01, "***"), (0.05, "**"), (0.1, "*"))
LEGEND = "*** p < .01, ** p < .05, * p < .1"


def mark(p_value: float | None) -> str:
    if p_value is None:
        return ""
    return next((marks for level, marks in LEVELS if p_value < level), "")


def model_pairs(labels: Sequence[str]) -> list[tuple[str, str]]:
    """Every unordered pair of compared models, in run order."""
    return list(combinations(labels, 2))
