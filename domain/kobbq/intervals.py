"""The KoBBQ headline intervals set on a score block (the resampling: domain/bbq/intervals.py)."""

from __future__ import annotations

from typing import Sequence

from culturebias.domain.bbq.intervals import KOBBQ_HEADLINES, kobbq_intervals
from culturebias.domain.bbq.model import Answer
from culturebias.domain.kobbq.summary import KoBBQScoreBlock


def attach_kobbq(
    block: KoBBQScoreBlock,
    answers: Sequence[Answer],
    prompts: Sequence[str],
    aggregate: str,
    *,
    seed: int,
    resamples: int,
    evaluator: str = "5_evaluation",
) -> None:
    """Set ``block.intervals`` (a ``KoBBQScoreBlock`` of these answers); nothing with ``resamples`` 0."""
    if resamples > 0:
        points = {m: getattr(block, m).mean for m in KOBBQ_HEADLINES}
        block.intervals = kobbq_intervals(
            answers, prompts, aggregate, points, seed=seed, resamples=resamples, evaluator=evaluator
        )
