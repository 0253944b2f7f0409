"""An LLM judge over any Generator port (PROTOCOLS §0.5): local HF model, ONNX, remote API, replay.

Each request's conversation goes to the generator (greedy); the first number in
the reply is clamped to the request's range. Requests without a number are asked
again, all together in one batch per round, at most ``max_retries`` more times;
each retry appends the previous reply and the request's reminder (in the
protocol's language) to the conversation, so it differs from the earlier request
(a greedy or cached generator would otherwise answer the same garbage again).
``JudgeVerdict.attempts`` counts the asks; ``value`` is None when every attempt failed.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from culturebias.domain.identity import ModelIdentity
from culturebias.domain.replies import Conversation, NumberQuestion, ask_for_numbers
from culturebias.domain.requests import GenerationParams, GenerationRequest, GenerationResult
from culturebias.ports.judging import JudgeRequest, JudgeVerdict


class Replies(Protocol):
    """What the judge asks: a ``Generator`` port, or the run's recorded generator over one."""

    @property
    def identity(self) -> ModelIdentity: ...

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]: ...


class GeneratorJudge:
    MAX_NEW_TOKENS = 16

    def __init__(
        self, generator: Replies, max_retries: int = 3, max_new_tokens: int = MAX_NEW_TOKENS, params: GenerationParams | None = None
    ):
        """``params``: the judge's own decoding (``judge.sampling.*``); default greedy."""
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self._generator = generator
        self.max_retries = max_retries
        self._params = params or GenerationParams(max_new_tokens=max_new_tokens, temperature=0.0)
        self.batches: list[int] = []  # generator batch sizes, for tests and diagnostics

    @property
    def identity(self) -> ModelIdentity:
        return self._generator.identity

    @property
    def generator(self) -> Replies:
        return self._generator

    def _ask(self, conversations: list[Conversation]) -> list[str]:
        self.batches.append(len(conversations))
        requests = [GenerationRequest.chat(conversation, self._params) for conversation in conversations]
        return [result.text for result in self._generator.generate(requests)]

    def judge(self, requests: Sequence[JudgeRequest]) -> list[JudgeVerdict]:
        questions = [NumberQuestion(tuple(r.messages), r.low, r.high, r.reminder) for r in requests]
        replies = ask_for_numbers(questions, self._ask, self.max_retries)
        return [JudgeVerdict(value=reply.value, raw=reply.raw, attempts=reply.attempts) for reply in replies]
