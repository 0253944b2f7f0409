"""Reading numbers from model and judge replies, with bounded, batched retries.

PROTOCOLS §0.5 and §3: "parse the first number; clamp to range; retry a bounded
number of times; report invalid counts". A reply that merely parrots the prompt is
invalid too, whatever digits it copied. The retry loop is written once here, over a
callback that sends one batch of conversations and returns one reply each, so the
judge adapter and any protocol stage that asks a model for a number re-ask only the
invalid items, in one batch per round.

A retry must not repeat the first request verbatim (a greedy, cached generator would
return the same garbage), so each retry appends the previous reply as an assistant
turn and the question's reminder as a user turn: the conversation grows with every
attempt. The reminder is in the protocol's own language, so each question states it.
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


@dataclass(frozen=True, slots=True)
class NumberQuestion:
    messages: Conversation
    low: float
    high: float
    # Sent after a reply without a number. It must hold no digit: a small model that
    # parrots the reminder must not produce a "valid" number (a reminder saying "0到10"
    # once turned echoed text into ratings of 0).
    reminder: str

    def __post_init__(self) -> None:
        if not self.reminder.strip():
            raise ValueError("a number question needs a reminder for its retries")
        if first_number(self.reminder) is not None:
            raise ValueError(f"a retry reminder must hold no number, got {self.reminder!r}")


@dataclass(frozen=True, slots=True)
class NumberReply:
    value: float | None  # clamped; None when no attempt gave a number
    raw: str  # the reply that was used (or the last one)
    attempts: int
    clamped: bool


def retry_conversation(question: NumberQuestion, previous_replies: Sequence[str]) -> Conversation:
    """The original messages, then (reply, reminder) for every failed attempt so far."""
    turns: list[ChatMessage] = list(question.messages)
    for reply in previous_replies:
        turns.append(ChatMessage("assistant", reply))
        turns.append(ChatMessage("user", question.reminder))
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
