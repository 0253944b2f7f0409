"""The KoBBQ headline intervals set on score blocks: the overall one and each label type's and category's
(the resampling: domain/bbq/intervals.py; a breakdown resamples the templates of its own answers)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Sequence

from culturebias.domain.bbq.aggregate import group_by
from culturebias.domain.bbq.intervals import KOBBQ_HEADLINES, kobbq_intervals
from culturebias.domain.bbq.model import Answer
from culturebias.domain.kobbq.aggregate import KoBBQAggregate, category_of, label_of
from culturebias.domain.kobbq.summary import KoBBQScoreBlock


def attach_kobbq_all(
    scores: KoBBQAggregate,
    answers: Sequence[Answer],
    prompts: Sequence[str],
    aggregate: str,
    *,
    seed: int,
    resamples: int,
    evaluator: str = "5_evaluation",
) -> None:
    """Set ``intervals`` on the overall block and on every block of the label-type and category breakdowns,
    each over the templates of its own answers; nothing with ``resamples`` 0."""
    if resamples <= 0:
        return
    blocks: list[tuple[KoBBQScoreBlock, Sequence[Answer]]] = [(scores.overall, answers)]
    breakdowns: tuple[tuple[Mapping[str, KoBBQScoreBlock], Callable[[Answer], str]], ...] = (
        (scores.by_label, label_of),
        (scores.by_category, category_of),
    )
    for breakdown, key in breakdowns:
        groups = group_by(answers, key)
        blocks += [(block, groups.get(name, [])) for name, block in breakdown.items()]
    for block, members in blocks:
        points = {m: getattr(block, m).mean for m in KOBBQ_HEADLINES}
        block.intervals = kobbq_intervals(
            members, prompts, aggregate, points, seed=seed, resamples=resamples, evaluator=evaluator
        )
