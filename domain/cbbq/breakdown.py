"""CBBQ scores per targeted group × stereotype topic (paper Fig. 6), pooled within each cell."""

from __future__ import annotations

from typing import Sequence

from culturebias.domain.bbq.aggregate import group_by
from culturebias.domain.cbbq.metrics import cbbq_scores, count_answers
from culturebias.domain.cbbq.summary import CBBQScores, GroupTopicScores
from culturebias.domain.bbq.model import Answer

UNSTATED = "(not stated)"


def group_topic_scores(answers: Sequence[Answer], w1: float, w2: float) -> list[GroupTopicScores]:
    """One row per (category, targeted group, topic) present in ``answers``, sorted."""
    cells = group_by(
        answers,
        lambda a: (a.item.category, a.item.targeted_group or UNSTATED, a.item.subcategory or UNSTATED),
    )
    rows = []
    for (category, group, topic), members in sorted(cells.items()):
        counts = count_answers(members)
        scores = CBBQScores(**cbbq_scores(counts, w1, w2), counts=counts)
        rows.append(GroupTopicScores(category=category, targeted_group=group, topic=topic, scores=scores))
    return rows


PAPER_WEIGHTS_NOTE = "the CBBQ paper states only w2 > w1 and publishes no values"


def weights_source(w1: float, w2: float) -> str:
    """Where S_total's weights come from (PROTOCOLS §2: 0.4 / 0.6 is this project's choice)."""
    if (w1, w2) == (0.4, 0.6):
        return f"culturebias's default (0.4, 0.6): {PAPER_WEIGHTS_NOTE}"
    return f"set by protocol.w1/protocol.w2; {PAPER_WEIGHTS_NOTE}"
