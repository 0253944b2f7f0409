"""Continuation log-likelihood from a completions reply with ``echo`` and ``logprobs`` (PROTOCOLS §0.1).

The server tokenises ``context + continuation`` once and returns, per prompt
token, its text, its character offset (``text_offset``) and its log-probability.
A token belongs to the continuation when it ends after ``len(context)``, so a
token straddling the boundary belongs to the continuation. A token whose text
is empty (a partial UTF-8 byte) ends where the next non-empty token ends.

Servers that count a BOS they added themselves in the offsets (vLLM counts the
length of ``"<s>"``) shift every offset by that token's length; that shift is
detected and undone. Any other mismatch between the offsets and the prompt
text raises instead of placing the boundary somewhere wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from culturebias.adapters.openai.client import MalformedReply
from culturebias.domain.requests import LoglikelihoodResult

GREEDY_TOLERANCE = 1e-6


class OffsetMismatch(MalformedReply):
    """The server's ``text_offset`` values do not line up with the prompt's characters."""


@dataclass(frozen=True)
class PromptTokens:
    texts: list[str]
    logprobs: list[float | None]
    offsets: list[int]
    top: list[dict[str, float] | None]
    shift: int  # offset units the server counts before the prompt's first character


def check_echo_reply(reply: dict[str, Any]) -> None:
    """Raise MalformedReply unless ``choices[0].logprobs`` holds aligned token lists."""
    try:
        logprobs = reply["choices"][0]["logprobs"]
    except (KeyError, IndexError, TypeError):
        raise MalformedReply("no choices[0].logprobs in the reply") from None
    if not isinstance(logprobs, dict):
        raise MalformedReply("choices[0].logprobs is empty: the server returned no prompt log-probabilities")
    lists = [logprobs.get(k) for k in ("tokens", "token_logprobs", "text_offset")]
    if not all(isinstance(v, list) for v in lists):
        raise MalformedReply("choices[0].logprobs lacks tokens, token_logprobs or text_offset")
    if len({len(v) for v in lists}) != 1 or not lists[0]:
        raise MalformedReply("tokens, token_logprobs and text_offset differ in length or are empty")


def prompt_tokens(reply: dict[str, Any], prompt: str) -> PromptTokens:
    """The prompt's tokens in ``reply`` (generated tokens dropped), with the offset shift found."""
    check_echo_reply(reply)
    lp = reply["choices"][0]["logprobs"]
    texts = [str(t) for t in lp["tokens"]]
    offsets = [int(o) for o in lp["text_offset"]]
    values = [None if v is None else float(v) for v in lp["token_logprobs"]]
    top_raw = lp.get("top_logprobs") or [None] * len(texts)
    top = [t if isinstance(t, dict) else None for t in top_raw] + [None] * max(0, len(texts) - len(top_raw))
    usage = reply.get("usage") or {}
    n = usage.get("prompt_tokens")
    if not isinstance(n, int) or not 0 < n <= len(texts):
        n = sum(1 for o in offsets if o < len(prompt)) or len(texts)
    end = offsets[n - 1] + len(texts[n - 1])
    shift = end - len(prompt)
    leading_special = n >= 2 and shift == len(texts[0]) and "".join(texts[1:n]) == prompt
    if shift != 0 and not leading_special:
        raise OffsetMismatch(
            f"the server's token offsets end at {end} for a prompt of {len(prompt)} characters "
            "(tokens decoded one by one do not add up to the prompt text), so the context/continuation "
            "boundary cannot be placed"
        )
    return PromptTokens(texts[:n], values[:n], offsets[:n], top[:n], shift)


def token_ends(tokens: PromptTokens) -> list[int]:
    ends = [o + len(t) for o, t in zip(tokens.offsets, tokens.texts)]
    following = ends[-1] if ends else 0
    for i in range(len(ends) - 1, -1, -1):
        if tokens.texts[i]:
            following = ends[i]
        else:
            ends[i] = following
    return ends


def continuation_start(tokens: PromptTokens, context_chars: int) -> int:
    """Index of the first continuation token under the straddle rule."""
    boundary = context_chars + tokens.shift
    for i, end in enumerate(token_ends(tokens)):
        if end > boundary:
            return i
    return len(tokens.texts)


def score_tokens(tokens: PromptTokens, start: int) -> LoglikelihoodResult:
    """Sum the log-probabilities of tokens ``start..``; the first token of the prompt has none."""
    total = 0.0
    count = 0
    greedy = True
    for i in range(start, len(tokens.texts)):
        value = tokens.logprobs[i]
        if value is None:
            if i == 0:
                continue  # nothing predicts the first token (PROTOCOLS §0.1: score tokens 2..n)
            raise MalformedReply(f"token {i} ({tokens.texts[i]!r}) has no log-probability")
        if not math.isfinite(value) and value != -math.inf:
            raise MalformedReply(f"token {i} has log-probability {value}")
        total += value
        count += 1
        top = tokens.top[i]
        greedy = greedy and bool(top) and value >= max(float(v) for v in top.values()) - GREEDY_TOLERANCE
    return LoglikelihoodResult(total, count, greedy)
