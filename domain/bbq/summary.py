"""The summary block the KoBBQ and CBBQ aggregates share (their summaries: domain/kobbq/summary.py,
domain/cbbq/summary.py). Every ratio is a ``Number``: an undefined one (empty denominator) is null.
"""

from __future__ import annotations

from culturebias.domain.summary import Block, Count, Number


class PromptStats(Block):
    """One metric over prompts: mean and std of the defined per-prompt values, and each prompt's value."""

    mean: Number
    std: Number
    n_prompts: Count
    per_prompt: dict[str, Number]
