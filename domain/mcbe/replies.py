"""Reading model and judge replies: the first number, clamped; an A/B choice; bounded retries.

PROTOCOLS §3: "parse the first number; clamp to range; retry a bounded number of
times; report invalid counts". A reply that merely parrots the prompt is invalid
too, whatever digits it copied. The retry loop is written once here, over a callback
that sends one batch of conversations and returns one reply each, so both the judge
adapter and the application's bias-scoring stage re-ask only the invalid items, in one
batch per round.

A retry must not repeat the first request verbatim (a greedy, cached generator would
return the same garbage), so each retry appends the previous reply as an assistant
turn and a short reminder (without digits) as a user turn: the conversation grows
with every attempt.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from culturebias.domain.requests import ChatMessage

Conversation = tuple[ChatMessage, ...]

# A minus sign counts only when it does not follow a digit ("0-13" is 0, then 13).
_NUMBER = re.compile(r"(?<![\d.])-?\d+(?:\.\d+)?")


def normalise(text: str) -> str:
    """NFKC: full-width digits, letters and punctuation become their ASCII forms."""
    return unicodedata.normalize("NFKC", text or "")


def first_number(text: str) -> float | None:
    match = _NUMBER.search(normalise(text))
    return float(match.group()) if match else None


def clamp(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


ECHO_MIN_CHARS = 8


def is_echo(reply: str, messages: Sequence[ChatMessage]) -> bool:
    """A reply that only repeats a stretch of the conversation (small models parrot prompts).

    Such a reply is no answer even when the copied stretch holds a number (the scale
    "0到10" of a prompt, say). Truncated trailing bytes are ignored; short replies
    ("8分") never count as echoes.
    """
    text = normalise(reply).strip().rstrip("\ufffd").strip()
    if len(text) < ECHO_MIN_CHARS:
        return False
    return any(text in normalise(m.content) for m in messages)


def parse_number(text: str, low: float, high: float) -> tuple[float | None, bool]:
    """(first number clamped to [low, high], whether clamping changed it); (None, False) if none."""
    value = first_number(text)
    if value is None:
        return None, False
    clamped = clamp(value, low, high)
    return clamped, clamped != value


# --- A/B choices (scenario selection) --------------------------------------------------

_EXPLICIT = re.compile(
    r"(?:答案|选项|选择|回答|选|answer|option|choice)\s*(?:是|为|应该是|应为|is|:)?\s*[\(\[【]?\s*([AB])(?![A-Za-z])",
    re.IGNORECASE,
)
_UPPER = re.compile(r"(?<![A-Za-z])([AB])(?![A-Za-z])")
_LEADING_LOWER = re.compile(r"^\s*[\(\[【]?\s*([ab])\s*(?:[\.\)\]】:、,;]|$)")
_SENTENCE_NUMBER = re.compile(r"(?:句子|sentence)\s*([12一二])", re.IGNORECASE)


def parse_choice(reply: str) -> str | None:
    """"A", "B", or None when the reply names neither or both.

    Accepts full-width letters (Ａ), "选项A", "答案是B", "A.", "(b)", a reply that is just
    "a"/"b", and, when no letter appears at all, "句子1"/"句子2" ("Sentence 2"). A lowercase letter
    counts only in those explicit forms, so an English article "a" is not an answer.
    """
    text = normalise(reply)
    letters = {m.upper() for m in _EXPLICIT.findall(text)}
    letters |= set(_UPPER.findall(text))
    lower = _LEADING_LOWER.match(text)
    if lower:
        letters.add(lower.group(1).upper())
    if len(letters) == 1:
        return letters.pop()
    if letters:
        return None
    named = {"1" if n in "1一" else "2" for n in _SENTENCE_NUMBER.findall(text)}
    if len(named) == 1:
        return "A" if named.pop() == "1" else "B"
    return None


# --- asking for numbers with bounded, batched retries ----------------------------------


@dataclass(frozen=True, slots=True)
class NumberQuestion:
    messages: Conversation
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class NumberReply:
    value: float | None  # clamped; None when no attempt gave a number
    raw: str  # the reply that was used (or the last one)
    attempts: int
    clamped: bool


# No digits: a small model that parrots the reminder must not produce a "valid" number
# (a reminder saying "0到10" once turned echoed text into ratings of 0).
REMINDER = "请只用一个数字回答上面要求的分数，不要写其他任何内容。"


def retry_conversation(question: NumberQuestion, previous_replies: Sequence[str]) -> Conversation:
    """The original messages, then (reply, reminder) for every failed attempt so far."""
    turns: list[ChatMessage] = list(question.messages)
    for reply in previous_replies:
        turns.append(ChatMessage("assistant", reply))
        turns.append(ChatMessage("user", REMINDER))
    return tuple(turns)


def ask_for_numbers(
    questions: Sequence[NumberQuestion],
    ask: Callable[[list[Conversation]], list[str]],
    max_retries: int,
) -> list[NumberReply]:
    """Ask every question; re-ask only those without a number, at most ``max_retries`` times.

    ``ask`` is called once per round with the conversations still pending (in order)
    and must return one reply per conversation.
    """
    if max_retries < 0:
        raise ValueError("max_retries must be >= 0")
    history: list[list[str]] = [[] for _ in questions]
    results: list[NumberReply | None] = [None] * len(questions)
    pending = list(range(len(questions)))
    for attempt in range(1, max_retries + 2):
        if not pending:
            break
        conversations = [retry_conversation(questions[i], history[i]) for i in pending]
        replies = ask(conversations)
        if len(replies) != len(pending):
            raise ValueError(f"asked {len(pending)} conversations, got {len(replies)} replies")
        still: list[int] = []
        for index, reply, conversation in zip(pending, replies, conversations):
            history[index].append(reply)
            value, clamped = parse_number(reply, questions[index].low, questions[index].high)
            if value is None or is_echo(reply, conversation):
                still.append(index)
            else:
                results[index] = NumberReply(value, reply, attempt, clamped)
        pending = still
    for index in pending:
        results[index] = NumberReply(None, history[index][-1], len(history[index]), False)
    return [r for r in results if r is not None]
