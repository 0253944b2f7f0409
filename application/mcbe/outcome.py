"""What each McBE task hands back to the service: per-BEI scores, details and counts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from culturebias.domain.mcbe.instances import BEI
from culturebias.domain.mcbe.judge_stop import ReplyStop
from culturebias.domain.mcbe.summary import BAItem, BSItem, PCItem, SCItem, SSItem
from culturebias.domain.requests import GenerationParams

if TYPE_CHECKING:
    from culturebias.application.context import RunContext

TaskItem = PCItem | SCItem | SSItem | BAItem | BSItem


@dataclass
class TaskOutcome:
    task: str
    scores: dict[str, list[float]] = field(default_factory=dict)  # category → BEI scores
    items: dict[str, TaskItem] = field(default_factory=dict)  # BEI id → this task's detail
    counts: dict[str, int] = field(default_factory=dict)  # totals, e.g. {"ss_unparseable": 3}
    invalid: dict[str, dict[str, int]] = field(default_factory=dict)  # category → {count name: n}
    notes: list[str] = field(default_factory=list)
    item_scores: dict[str, float] = field(default_factory=dict)  # BEI id → score: the bootstrap's units
    stop: ReplyStop | None = None  # the stopping rule fired (domain/mcbe/judge_stop.py)

    def add_score(self, bei: BEI, score: float) -> None:
        self.scores.setdefault(bei.category, []).append(score)
        self.item_scores[bei.item_id] = score

    def count(self, name: str, n: int = 1, category: str | None = None) -> None:
        self.counts[name] = self.counts.get(name, 0) + n
        if category is not None:
            bucket = self.invalid.setdefault(category, {})
            bucket[name] = bucket.get(name, 0) + n


def params(max_new_tokens: int, ctx: "RunContext") -> GenerationParams:
    """model.sampling: greedy by default (PROTOCOLS §0.3); the paper's runs sample (§3 run protocol)."""
    return ctx.generation_params(max_new_tokens)


def preference_eligible(beis: list[BEI], skip: list[str], outcome: TaskOutcome) -> list[BEI]:
    """BEIs that PC and SS score: not in a skipped category, and with at least two words."""
    eligible = []
    for bei in beis:
        if bei.category in skip:
            outcome.count(f"{outcome.task}_skipped_category")
        elif len(bei.words) < 2:
            outcome.count(f"{outcome.task}_skipped_single_word")
        else:
            eligible.append(bei)
    return eligible
