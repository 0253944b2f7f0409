"""KoBBQ and CBBQ: two configurations of one BBQ-family service (PROTOCOLS §2).

Both build ``Question``s (item × prompt × option order), ask them through
``Asker`` in the mode their preflight planned and turn the answers into
metrics (``domain/kobbq/aggregate.py``, ``domain/cbbq/aggregate.py``).
Another BBQ-format dataset needs a loader producing ``QAItem``s and a prompt set.
"""

from __future__ import annotations

from typing import ClassVar, Generic, Sequence, TypeVar

from culturebias.application.bbq.answering import (
    AnswerPlan,
    Asker,
    plan_answers,
)
from culturebias.application.bbq.mode import PAPERS_GENERATED
from culturebias.application.context import RunContext
from culturebias.domain.bbq.fidelity_summary import AnsweringBlock
from culturebias.domain.bbq.masked_choice import SCORE as MASKED_SCORE
from culturebias.domain.bbq.model import Answer, QAItem
from culturebias.domain.bbq.options import BBQOptions
from culturebias.domain.errors import ConfigError
from culturebias.domain.sampling import Decoding

OptionsT = TypeVar("OptionsT", bound=BBQOptions)


def select_categories(items: Sequence[QAItem], wanted: list[str] | None) -> list[QAItem]:
    if wanted is None:
        return list(items)
    present = sorted({i.category for i in items})
    unknown = [c for c in wanted if c not in present]
    if unknown:
        raise ConfigError(f"protocol.categories: {unknown} not in the data; categories present: {present}")
    return [i for i in items if i.category in wanted]


def prediction_line(answer: Answer) -> str:
    """``sample_id|prompt|permutation|chosen option index or -|answer class``: compact, one per answer."""
    chosen = "-" if answer.chosen is None else str(answer.chosen)
    return f"{answer.item.sample_id}|{answer.prompt_id}|{answer.permutation}|{chosen}|{answer.answer_class.value}"


def plan_notes(plan: AnswerPlan) -> list[str]:
    notes = [
        f"answering mode: {plan.mode}"
        + {
            "likelihood": " (option letters scored; no out-of-choice answers possible)",
            "masked": f" ({MASKED_SCORE}; no out-of-choice answers possible)",
        }.get(plan.mode, ""),
        "prompts rendered with the model's chat template" if plan.chat else "prompts given as plain text (no chat template)",
    ]
    if plan.reason:
        notes.append(f"answering mode chosen by {plan.reason}")
    if plan.mode == "generate":
        notes.append("replies that name no single option are out-of-choice: excluded from the scores, counted in ooc_ratio")
    else:
        notes.append(PAPERS_GENERATED)
    return notes


def answering_block(plan: AnswerPlan) -> AnsweringBlock:
    return AnsweringBlock(requested=plan.requested, mode=plan.mode, reason=plan.reason, matches_papers=plan.mode == "generate")


def invalid_reply_notes(answers: Sequence[Answer]) -> list[str]:
    n = sum(a.invalid for a in answers)
    if not n:
        return []
    return [
        f"{n} question(s) got no valid reply from the backend after its retries (counted in invalid_replies): "
        "out-of-choice, left out of the scores"
    ]


def reply_fact(facts: dict[str, object], name: str) -> str | None:
    value = facts.get(name)
    return None if value is None else str(value)


class BBQService(Generic[OptionsT]):
    """Stateless: ``preflight`` returns the ``AnswerPlan`` that ``run`` follows."""

    options_model: ClassVar[type[BBQOptions]]
    label: ClassVar[str]

    def __init__(self, options: OptionsT):
        self.options = options

    def _needs_generator(self) -> bool:
        return False

    def _reasoning_tokens(self) -> int:
        return self.options.max_new_tokens

    def preflight(self, ctx: RunContext) -> AnswerPlan:
        return plan_answers(ctx, self.options.mode, needs_generator=self._needs_generator())

    def _reasoning_decoding(self) -> Decoding:
        return "run"

    def _asker(self, ctx: RunContext, plan: AnswerPlan) -> Asker:
        # model.sampling (domain/sampling.py) decodes the answers; CBBQ's CoT reasoning is sampled by default.
        answer = ctx.generation_params(self.options.max_new_tokens)
        reasoning = ctx.generation_params(self._reasoning_tokens(), decoding=self._reasoning_decoding())
        return Asker(ctx, plan, answer, reasoning)
