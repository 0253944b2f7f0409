"""Prompt robustness within one run (PROTOCOLS §3): SC and BS under a further prompt set, correlated with the first.

Each further set of ``protocol.prompt_set`` re-runs SC and BS; its category scores are
set against the first set's, category by category, with Spearman's and Pearson's
correlation (``metrics.prompt_robustness``). Undefined correlations (fewer than two
categories, or a constant column) are null with the reason stated.
"""

from __future__ import annotations

from pydantic import Field

import math
from collections.abc import Mapping

from culturebias.domain.mcbe.metrics import prompt_robustness
from culturebias.domain.summary import Block, Count, Number


class RobustnessCell(Block):
    """One task: the first prompt set's category scores against a further set's."""

    spearman: Number = Field(description="Spearman's rho between the two prompt sets' scores")
    spearman_p: Number = Field(description="its p-value")
    pearson: Number = Field(description="Pearson's r")
    pearson_p: Number = Field(description="its p-value")
    n: Count = Field(description="categories scored under both sets")
    categories: list[str] = Field(description="those categories")
    note: str | None = Field(None, description="why a correlation is undefined; null otherwise")


class PromptVariant(Block):
    """A further prompt set: its SC/BS scores, invalid counts, and the correlations with the first set."""

    against: str = Field(description="the prompt set compared with (the first)")
    tasks: dict[str, Number] = Field(description="task → mean over categories under this set")
    categories: dict[str, dict[str, Number]] = Field(description="category → task → score under this set")
    invalid: dict[str, Count] = Field(description="invalid counts under this set, e.g. bs_invalid, sc_none_named")
    robustness: dict[str, RobustnessCell] = Field(description="task → correlation with the first set")


def robustness(first: Mapping[str, float | None], other: Mapping[str, float | None]) -> RobustnessCell:
    """Correlation over the categories that both prompt sets scored."""
    both = {k: (x, y) for k in first if (x := first.get(k)) is not None and (y := other.get(k)) is not None}
    keys = list(both)
    result = prompt_robustness([float(x) for x, _ in both.values()], [float(y) for _, y in both.values()])
    note = None
    if math.isnan(result.spearman):
        note = (
            "fewer than two categories scored under both prompt sets"
            if len(keys) < 2
            else "a prompt set gives every category the same score: no correlation is defined"
        )
    return RobustnessCell(
        spearman=result.spearman,
        spearman_p=result.spearman_p,
        pearson=result.pearson,
        pearson_p=result.pearson_p,
        n=len(keys),
        categories=keys,
        note=note,
    )
