"""McBE cells of a run given as a typed summary or as its summary.json object.

The cross-model statistics (Friedman, Spearman, Pearson) are in
``domain/mcbe/comparison.py``; ``culturebias.compare`` runs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Union

from culturebias.domain.mcbe import comparison
from culturebias.domain.mcbe.summary import McBESummary

SummaryLike = Union[McBESummary, Mapping[str, Any]]


def typed(summary: SummaryLike) -> McBESummary:
    return summary if isinstance(summary, McBESummary) else McBESummary.model_validate(dict(summary))


def cells(summary: SummaryLike) -> dict[str, float | None]:
    """``category/task`` → score, for every scored cell of one McBE summary."""
    return comparison.cells(typed(summary))
