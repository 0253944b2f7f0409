"""Comparing McBE runs: Friedman test across models, Spearman/Pearson robustness across prompts (PROTOCOLS §3).

Both work on ``summary.json`` dictionaries of finished McBE runs; the blocks are
the category × task cells every run has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from culturebias.domain.mcbe.metrics import friedman_test, prompt_robustness
from culturebias.domain.mcbe.settings import TASKS


def cells(summary: Mapping[str, Any]) -> dict[str, float | None]:
    """``category/task`` → score, for every scored cell of one McBE summary."""
    out: dict[str, float | None] = {}
    for category, row in summary["metrics"]["categories"].items():
        for task in TASKS:
            if task in row:
                out[f"{category}/{task}"] = row[task]
    return out


def _common(summaries: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[dict[str, float | None]]]:
    tables = [cells(s) for s in summaries]
    keys = sorted(set.intersection(*(set(t) for t in tables))) if tables else []
    return keys, tables


def compare_models(summaries: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Friedman test of ≥3 models (name → summary) over their shared category × task cells."""
    keys, tables = _common(list(summaries.values()))
    result = friedman_test({name: [table[k] for k in keys] for name, table in zip(summaries, tables)})
    return {**asdict(result), "blocks": keys}


def prompt_robustness_of(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """Spearman and Pearson correlation between two runs' cells (e.g. one model, two prompt wordings)."""
    keys, (a, b) = _common([first, second])
    keep = [k for k in keys if a[k] is not None and b[k] is not None]
    result = prompt_robustness([a[k] for k in keep], [b[k] for k in keep])
    return {**asdict(result), "blocks": keep}
