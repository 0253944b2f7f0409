"""What the application asks of a model, and what comes back (PROTOCOLS §0).

Plain frozen dataclasses: these are created by the hundred thousand, so they
stay light and hashable (duplicate requests are scored once).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Sequence

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class LoglikelihoodRequest:
    """Score ``continuation`` given ``context`` (PROTOCOLS §0.1).

    ``context`` is already-rendered text: when it comes from a chat template it
    holds the BOS token, so adapters must tokenise with ``add_special_tokens=False``.
    With an empty context the adapter prepends BOS where the tokenizer adds one by
    default, else scores tokens 2..n.
    """

    context: str
    continuation: str


@dataclass(frozen=True, slots=True)
class LoglikelihoodResult:
    logprob: float  # sum of natural-log probabilities of the continuation tokens
    n_tokens: int  # number of continuation tokens scored
    is_greedy: bool  # every continuation token was the argmax

    @property
    def mean_logprob(self) -> float:
        return self.logprob / self.n_tokens if self.n_tokens else float("nan")


@dataclass(frozen=True, slots=True)
class PseudoLoglikelihoodRequest:
    """Masked-LM score of the characters ``text[span_start:span_end]`` (PROTOCOLS §0.2).

    Every token overlapping the span is masked once, alone, and ``log p(token | rest)``
    is summed.
    """

    text: str
    span_start: int
    span_end: int


@dataclass(frozen=True, slots=True)
class PseudoLoglikelihoodResult:
    logprob: float
    n_tokens: int


@dataclass(frozen=True, slots=True)
class GenerationParams:
    max_new_tokens: int = 64
    temperature: float = 0.0  # 0 = greedy
    top_p: float = 1.0
    seed: int = 0
    stop: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """Either a plain ``prompt`` or chat ``messages`` (rendered with the model's template)."""

    prompt: str | None = None
    messages: tuple[ChatMessage, ...] | None = None
    params: GenerationParams = field(default_factory=GenerationParams)
    # Deterministic identity of the question asked (e.g. BBQ sample, prompt, permutation),
    # so a replay backend can look up answers produced elsewhere. None for ordinary requests.
    key: str | None = None

    def __post_init__(self) -> None:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("a GenerationRequest needs exactly one of prompt or messages")

    @staticmethod
    def chat(messages: Sequence[ChatMessage], params: GenerationParams | None = None) -> "GenerationRequest":
        return GenerationRequest(messages=tuple(messages), params=params or GenerationParams())


@dataclass(frozen=True, slots=True)
class GenerationResult:
    text: str
