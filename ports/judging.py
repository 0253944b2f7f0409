"""An LLM judge that returns a number in a stated range (PROTOCOLS §0.5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence, runtime_checkable

from culturebias.domain.identity import ModelIdentity
from culturebias.domain.requests import ChatMessage


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    messages: tuple[ChatMessage, ...]
    low: float
    high: float
    # Sent, in the protocol's language and without digits, when a reply held no number.
    reminder: str


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    value: float | None  # None when no valid number came back after the retries
    raw: str
    attempts: int


@runtime_checkable
class Judge(Protocol):
    @property
    def identity(self) -> ModelIdentity: ...

    def judge(self, requests: Sequence[JudgeRequest]) -> list[JudgeVerdict]: ...


@runtime_checkable
class RetryingJudge(Protocol):
    """A judge that asks an unparseable verdict again at most ``max_retries`` more times (the summary says how often)."""

    @property
    def max_retries(self) -> int: ...
