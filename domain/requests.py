"""What the application asks of a model, and what comes back (PROTOCOLS §0).

Plain frozen dataclasses: these are created by the hundred thousand, so they
stay light and hashable (duplicate requests are scored once).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal, Mapping, Sequence

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Role
    content: str


def message_dicts(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    """Chat messages as chat templates and OpenAI-compatible servers take them."""
    return [{"role": m.role, "content": m.content} for m in messages]


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
    # The backend got no valid reply for this request after its retries: ``logprob`` is NaN
    # (never 0.0); protocols count it as an invalid reply and leave its item out of their metrics.
    invalid: bool = False

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


SamplingStrategy = Literal["greedy", "sample", "model"]
# GenerationParams fields a request key leaves out while unset, so keys made before they existed stay valid.
_KEY_OPTIONAL = ("top_k", "repetition_penalty", "strategy")


@dataclass(frozen=True, slots=True)
class GenerationParams:
    """Decoding of one request (``domain.sampling.SamplingSettings`` builds them from ``model.sampling``).

    ``strategy`` None: greedy when ``temperature`` is 0, else ``sample``. Under ``sample``
    and ``model`` a value left None is the model's own; ``model`` takes whether to sample
    from the model too. A greedy request's seed is always 0: the seed changes nothing there,
    so a greedy reply is reused under any seed.
    """

    max_new_tokens: int = 64
    temperature: float | None = 0.0  # 0 = greedy
    top_p: float | None = 1.0
    seed: int = 0
    stop: tuple[str, ...] = ()
    top_k: int | None = None
    repetition_penalty: float | None = None
    strategy: SamplingStrategy | None = None

    def __post_init__(self) -> None:
        if self.mode == "greedy" and self.seed != 0:
            object.__setattr__(self, "seed", 0)

    @property
    def mode(self) -> SamplingStrategy:
        if self.strategy is not None:
            return self.strategy
        return "sample" if (self.temperature or 0.0) > 0 else "greedy"

    def key_fields(self) -> dict[str, object]:
        """What a stored reply's key holds of these parameters (fields added later only when set)."""
        fields = {name: getattr(self, name) for name in self.__dataclass_fields__}
        return {k: v for k, v in fields.items() if not (k in _KEY_OPTIONAL and v is None)}


KeyValue = str | int


def key_text(value: object) -> str:
    """How a key field's value is compared: as stripped text (a record's ``1`` answers a key's ``"1"``)."""
    return str(value).strip()


@dataclass(frozen=True, slots=True)
class RequestKey:
    """Which question a generation request asks, as named fields, and which answer field replies to it.

    ``GenerationRequest.key`` carries it encoded, so that answers produced
    elsewhere can be looked up (the replay backend): a record answers the
    request when it has every field of ``fields`` with the same value (compared
    by ``key_text``), and its ``answer`` field holds the reply.
    """

    fields: tuple[tuple[str, KeyValue], ...]
    answer: str = "raw"

    @staticmethod
    def of(fields: Mapping[str, KeyValue], answer: str = "raw") -> "RequestKey":
        return RequestKey(tuple(fields.items()), answer)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.fields)

    def texts(self) -> tuple[str, ...]:
        return tuple(key_text(value) for _, value in self.fields)

    def describe(self) -> str:
        """``sample_id='s1', prompt_id='1', permutation=0``: the fields, as errors name them."""
        return ", ".join(f"{name}={value!r}" for name, value in self.fields)

    def encode(self) -> str:
        return json.dumps({"fields": dict(self.fields), "answer": self.answer}, ensure_ascii=False)

    @staticmethod
    def decode(text: str) -> "RequestKey":
        """ValueError unless ``text`` is an encoded key: a JSON object of non-empty ``fields`` (text or integers) and ``answer``."""
        try:
            data = json.loads(text)
        except (TypeError, ValueError):
            data = None
        fields = data.get("fields") if isinstance(data, dict) else None
        answer = data.get("answer", "raw") if isinstance(data, dict) else None
        if (
            not isinstance(fields, dict)
            or not fields
            or not isinstance(answer, str)
            or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in fields.values())
        ):
            raise ValueError(f"not an encoded RequestKey: {text!r}")
        return RequestKey(tuple(fields.items()), answer)


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """Either a plain ``prompt`` or chat ``messages`` (rendered with the model's template)."""

    prompt: str | None = None
    messages: tuple[ChatMessage, ...] | None = None
    params: GenerationParams = field(default_factory=GenerationParams)
    # ``RequestKey.encode()``: the deterministic identity of the question asked (e.g. a BBQ
    # sample, prompt and permutation), so a replay backend can look up answers produced
    # elsewhere. None for ordinary requests.
    key: str | None = None

    def __post_init__(self) -> None:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("a GenerationRequest needs exactly one of prompt or messages")

    @staticmethod
    def chat(messages: Sequence[ChatMessage], params: GenerationParams | None = None, key: str | None = None) -> "GenerationRequest":
        return GenerationRequest(messages=tuple(messages), params=params or GenerationParams(), key=key)


@dataclass(frozen=True, slots=True)
class GenerationResult:
    text: str
    # The backend got no valid reply (e.g. ``content: null``) after its retries: ``text`` is
    # empty and means nothing; protocols count it as an invalid reply, never as an answer.
    invalid: bool = False
