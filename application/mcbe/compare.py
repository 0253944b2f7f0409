"""Comparing McBE runs: Friedman test across models, Spearman/Pearson robustness across prompts (PROTOCOLS §3).

Both work on finished McBE runs, given as typed summaries (what ``evaluate``
returns) or as ``summary.json`` dictionaries; the blocks are the category × task
cells every run has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any, Union

from culturebias.domain.mcbe.metrics import friedman_test, prompt_robustness
from culturebias.domain.mcbe.options import TASKS
from culturebias.domain.mcbe.summary import McBESummary

SummaryLike = Union[McBESummary, Mapping[str, Any]]


def cells(summary: SummaryLike) -> dict[str, float | None]:
    """``category/task`` → score, for every scored cell of one McBE summary."""
    out: dict[str, float | None] = {}
    if isinstance(summary, McBESummary):
        for category, scores in summary.metrics.categories.items():
            for task, value in scores.task_scores().items():
                out[f"{category}/{task}"] = value
        return out
    for category, row in summary["metrics"]["categories"].items():
        for task in TASKS:
            if task in row:
                out[f"{category}/{task}"] = row[task]
    return out


def _common(summaries: Sequence[SummaryLike]) -> tuple[list[str], list[dict[str, float | None]]]:
    tables = [cells(s) for s in summaries]
    keys = sorted(set.intersection(*(set(t) for t in tables))) if tables else []
    return keys, tables


def compare_models(summaries: Mapping[str, SummaryLike]) -> dict[str, Any]:
    """Friedman test of ≥3 models (name → summary) over their shared category × task cells."""
    keys, tables = _common(list(summaries.values()))
    result = friedman_test({name: [table[k] for k in keys] for name, table in zip(summaries, tables)})
    return {**asdict(result), "blocks": keys}


def prompt_robustness_of(first: SummaryLike, second: SummaryLike) -> dict[str, Any]:
    """Spearman and Pearson correlation between two runs' cells (e.g. one model, two prompt wordings)."""
    keys, (a, b) = _common([first, second])
    keep = [k for k in keys if a[k] is not None and b[k] is not None]
    result = prompt_robustness([a[k] for k in keep], [b[k] for k in keep])
    return {**asdict(result), "blocks": keep}
