"""Asking BBQ questions in either mode, through the ports, one port call per stage.

- ``generate``: the rendered prompt goes to the generator; the reply is mapped
  to a displayed option (``domain/bbq/answers.py``) or counted out-of-choice.
- ``likelihood``: each option letter is scored as the continuation of the
  rendered prompt; the three requests of a question share the same context
  (the HF scorer reuses its prefix), every request of the stage goes to the
  scorer in one call, and the likeliest letter is the answer.

A question with two user turns (CBBQ Q+IF+CoT) first has the model reason
in reply to the first turn (always generated); the second turn is then asked
with that reasoning in the transcript.

With a chat template the user turns are chat messages (rendered by the
model's template, generation prompt appended) and the scored continuation is
the bare letter; without one the prompt is plain text and the continuation is
a space and the letter (the prompts end with "정답:" / "答案：").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from culturebias.application.bbq.masked import ask_masked
from culturebias.application.bbq.mode import choose_mode
from culturebias.application.context import RunContext
from culturebias.application.bbq.records import record_generated, record_scored
from culturebias.domain.bbq.answers import parse_choice
from culturebias.domain.bbq.keys import AnswerKey
from culturebias.domain.bbq.model import Answer, QAItem
from culturebias.domain.bbq.options import AnswerMode, Mode
from culturebias.domain.errors import CapabilityError
from culturebias.domain.requests import (
    ChatMessage,
    GenerationParams,
    GenerationRequest,
    GenerationResult,
    LoglikelihoodRequest,
)


@dataclass(frozen=True, slots=True)
class Question:
    """One item asked under one prompt and one option order."""

    item: QAItem  # options in dataset order, worded as this prompt words them
    prompt_id: str
    permutation: int
    order: tuple[int, ...]  # dataset option index displayed at each position
    letters: tuple[str, ...]
    turns: tuple[str, ...]  # user turns: one, or (reasoning request, question) for CoT
    explains: bool = False  # the reply explains its answer (CBBQ Q+Explain): the record keeps the explanation

    def key(self, turn: str = "answer") -> str:
        return AnswerKey(self.item.sample_id, self.prompt_id, self.permutation, turn).encode()

    @property
    def shown(self) -> tuple[str, ...]:
        return tuple(self.item.options[i] for i in self.order)


@dataclass(frozen=True)
class AnswerPlan:
    """What preflight decided for a run: the answering mode and whether prompts go through the chat template."""

    mode: AnswerMode
    chat: bool
    requested: Mode = "auto"
    reason: str = ""  # why this mode (application/bbq/mode.py)


def resolve_mode(ctx: RunContext, requested: Mode, needs_generator: bool = False) -> AnswerMode:
    """The answering mode a run uses (``choose_mode``: auto = generate with a chat template, else likelihood)."""
    return choose_mode(ctx, requested, uses_chat_template(ctx), needs_generator).mode


def uses_chat_template(ctx: RunContext) -> bool:
    try:
        return bool(ctx.templater().has_chat_template)
    except CapabilityError:
        return False


def plan_answers(ctx: RunContext, requested: Mode, needs_generator: bool = False) -> AnswerPlan:
    """Checks the capabilities the run needs (before anything runs) and fixes how it answers."""
    chat = uses_chat_template(ctx)
    choice = choose_mode(ctx, requested, chat, needs_generator)
    if chat and choice.mode == "likelihood":
        ctx.templater().check_render()  # scored prompts are rendered text: a server's own template may not render here
    return AnswerPlan(mode=choice.mode, chat=chat, requested=requested, reason=choice.reason)


class Asker:
    def __init__(
        self,
        ctx: RunContext,
        plan: AnswerPlan,
        answer_params: GenerationParams,
        reasoning_params: GenerationParams,
        explain_params: GenerationParams | None = None,  # a question that explains its answer (default: answer_params)
    ):
        self.ctx = ctx
        self.mode = plan.mode
        self.chat = plan.chat
        self.answer_params = answer_params
        self.reasoning_params = reasoning_params
        self.explain_params = explain_params or answer_params

    # -- rendering ---------------------------------------------------------------
    def _messages(self, question: Question, reasoning: str | None) -> tuple[ChatMessage, ...]:
        messages = [ChatMessage("user", question.turns[0])]
        if len(question.turns) > 1:
            messages += [ChatMessage("assistant", reasoning or ""), ChatMessage("user", question.turns[1])]
        return tuple(messages)

    def _plain(self, question: Question, reasoning: str | None) -> str:
        if len(question.turns) == 1:
            return question.turns[0]
        return question.turns[0] + (reasoning or "") + "\n\n" + question.turns[1]

    def _generation_request(self, question: Question, reasoning: str | None, params: GenerationParams, key: str) -> GenerationRequest:
        if self.chat:
            return GenerationRequest(messages=self._messages(question, reasoning), params=params, key=key)
        return GenerationRequest(prompt=self._plain(question, reasoning), params=params, key=key)

    def _reasoning_request(self, question: Question) -> GenerationRequest:
        if self.chat:
            messages = (ChatMessage("user", question.turns[0]),)
            return GenerationRequest(messages=messages, params=self.reasoning_params, key=question.key("reasoning"))
        return GenerationRequest(prompt=question.turns[0], params=self.reasoning_params, key=question.key("reasoning"))

    def _scoring_context(self, question: Question, reasoning: str | None) -> str:
        if self.chat:
            return self.ctx.templater().render(self._messages(question, reasoning), add_generation_prompt=True)
        return self._plain(question, reasoning)

    # -- asking ------------------------------------------------------------------
    def ask(self, questions: Sequence[Question], label: str) -> list[Answer]:
        if self.mode == "masked":  # an encoder: no reasoning turn, options scored by pseudo-log-likelihood
            return ask_masked(self.ctx, questions, label)
        reasoning = self._reason(questions, label)
        if self.mode == "generate":
            return self._generate(questions, reasoning, label)
        return self._score(questions, reasoning, label)

    def _reason(self, questions: Sequence[Question], label: str) -> list[GenerationResult | None]:
        two_turn = [i for i, q in enumerate(questions) if len(q.turns) > 1]
        out: list[GenerationResult | None] = [None] * len(questions)
        if not two_turn:
            return out
        requests = [self._reasoning_request(questions[i]) for i in two_turn]
        replies = self.ctx.generator().generate(requests, description=f"{label}: reasoning turns")
        for i, reply in zip(two_turn, replies):
            out[i] = reply
        return out

    def _generate(self, questions: Sequence[Question], reasoning: list[GenerationResult | None], label: str) -> list[Answer]:
        requests = [
            self._generation_request(q, _text(r), self.explain_params if q.explains else self.answer_params, q.key())
            for q, r in zip(questions, reasoning)
        ]
        replies = self.ctx.generator().generate(requests, description=f"{label}: answers")
        answers = []
        for question, reply, turn in zip(questions, replies, reasoning):
            invalid = reply.invalid or _invalid(turn)
            position = None if invalid else parse_choice(reply.text, question.letters, question.shown)
            chosen = None if position is None else question.order[position]
            answers.append(Answer(question.item, question.prompt_id, question.permutation, chosen, reply.text, invalid=invalid))
        record_generated(self.ctx, label, questions, requests, replies, answers)
        return answers

    def _score(self, questions: Sequence[Question], reasoning: list[GenerationResult | None], label: str) -> list[Answer]:
        requests = []
        contexts = []  # kept for the audit trail
        for question, r in zip(questions, reasoning):
            context = self._scoring_context(question, _text(r))
            contexts.append(context)
            prefix = "" if self.chat else " "
            requests += [LoglikelihoodRequest(context, prefix + letter) for letter in question.letters]
        results = self.ctx.scorer().loglikelihood(requests, description=f"{label}: option letters")
        answers = []
        start = 0
        for question, turn in zip(questions, reasoning):
            n = len(question.letters)
            scores = results[start : start + n]
            start += n
            # A reasoning turn that never came, or a letter the backend got no valid score for:
            # the question cannot be answered (out-of-choice, counted as an invalid reply).
            if _invalid(turn) or any(r.invalid for r in scores):
                answers.append(Answer(question.item, question.prompt_id, question.permutation, None, "", invalid=True))
                continue
            position = int(np.argmax([r.logprob for r in scores]))
            answers.append(
                Answer(question.item, question.prompt_id, question.permutation, question.order[position], question.letters[position])
            )
        record_scored(self.ctx, label, questions, contexts, results, answers, "" if self.chat else " ")
        return answers


def _text(reply: GenerationResult | None) -> str | None:
    return None if reply is None else reply.text


def _invalid(reply: GenerationResult | None) -> bool:
    return reply is not None and reply.invalid
