"""The McBE metrics that say how a run followed the paper: PC text, prompt sets and their robustness, stopped replies.

Kept out of ``service.py`` so that the service builds its metrics with one call.
Further prompt sets re-run SC and BS here (``variants.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from culturebias.application.context import RunContext
from culturebias.application.mcbe.outcome import TaskOutcome
from culturebias.application.mcbe.variants import prompt_variants
from culturebias.domain.mcbe.instances import BEI, McBEDataset
from culturebias.domain.mcbe.options import McBEOptions


def fidelity_metrics(
    ctx: RunContext, beis: list[BEI], dataset: McBEDataset, options: McBEOptions, outcomes: Mapping[str, TaskOutcome]
) -> dict[str, Any]:  # Any: McBEMetrics' keyword arguments
    """Keyword arguments of ``McBEMetrics``: only what applies to this run (sparse keys stay out)."""
    extra: dict[str, Any] = {"prompt_set": list(options.prompt_set)}  # Any: McBEMetrics' keyword arguments
    if options.judge_role and "ba" in outcomes:
        extra["judge_role"] = options.judge_role
    if "pc" in outcomes:
        extra["pc_text"] = options.pc_text
    variants = prompt_variants(ctx, beis, dataset, options, outcomes)
    if variants:
        extra["prompt_variants"] = variants
    stops = {task: outcome.stop for task, outcome in outcomes.items() if outcome.stop is not None}
    if stops:
        extra["reply_stops"] = stops
    return extra
