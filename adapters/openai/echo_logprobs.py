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

A reply is used only when it is whole (``prompt_tokens``): the token lists are
there and equally long, the tokens cover the prompt to its last character, and
every prompt token after the first has a finite log-probability. The whole
prompt is checked, not only the continuation, because one cached reply serves
every split of the same text into context and continuation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from culturebias.adapters.openai.client import InvalidReply
from culturebias.domain.requests import LoglikelihoodResult

GREEDY_TOLERANCE = 1e-6


class NoPromptLogprobs(InvalidReply):
    """The reply has no ``choices[0].logprobs`` token lists: the server gives no prompt log-probabilities."""


class OffsetMismatch(InvalidReply):
    """The server's ``text_offset`` values run past the prompt's characters (tokens decoded one by one)."""


class LogprobsCutShort(InvalidReply):
    """The reply's tokens end before the prompt does."""


@dataclass(frozen=True)
class PromptTokens:
    texts: list[str]
    logprobs: list[float | None]  # None only for the first token
    offsets: list[int]
    top: list[dict[str, float] | None]
    shift: int  # offset units the server counts before the prompt's first character


def check_echo_reply(reply: dict[str, Any]) -> None:
    """Raise InvalidReply unless ``choices[0].logprobs`` holds aligned token lists."""
    try:
        logprobs = reply["choices"][0]["logprobs"]
    except (KeyError, IndexError, TypeError):
        raise NoPromptLogprobs("no choices[0].logprobs in the reply") from None
    if not isinstance(logprobs, dict):
        raise NoPromptLogprobs("choices[0].logprobs is empty: the server returned no prompt log-probabilities")
    lists = [logprobs.get(k) for k in ("tokens", "token_logprobs", "text_offset")]
    if not all(isinstance(v, list) for v in lists):
        raise NoPromptLogprobs("choices[0].logprobs lacks tokens, token_logprobs or text_offset")
    if len({len(v) for v in lists}) != 1 or not lists[0]:
        raise InvalidReply("tokens, token_logprobs and text_offset differ in length or are empty")


def check_echo(body: dict[str, Any], reply: dict[str, Any]) -> None:
    """The client's check for a scoring request: the reply is whole for the body's prompt."""
    prompt_tokens(reply, str(body.get("prompt", "")))


def _numbers(top: Any) -> bool:
    """A ``top_logprobs`` entry that can say whether a token was the argmax; anything else means unknown."""
    return (
        isinstance(top, dict)
        and bool(top)
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in top.values())
    )


def _top_choices(logprobs: dict[str, Any], count: int) -> list[dict[str, float] | None]:
    """``top_logprobs`` per listed token; an entry that cannot say which token was the argmax is None."""
    raw = logprobs.get("top_logprobs") if isinstance(logprobs.get("top_logprobs"), list) else []
    return [t if _numbers(t) else None for t in raw] + [None] * max(0, count - len(raw))


def _logprob(value: Any, index: int, text: str) -> float | None:
    if value is None:
        if index == 0:
            return None  # nothing predicts the first token (PROTOCOLS §0.1: score tokens 2..n)
        raise InvalidReply(f"prompt token {index} ({text!r}) has no log-probability (null)")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidReply(f"prompt token {index} ({text!r}) has log-probability {value!r}, not a number")
    if not math.isfinite(value):
        raise InvalidReply(f"prompt token {index} ({text!r}) has log-probability {value}, not a finite number")
    return float(value)


def prompt_tokens(reply: dict[str, Any], prompt: str) -> PromptTokens:
    """The prompt's tokens in ``reply`` (generated tokens dropped), checked whole, with the offset shift found."""
    check_echo_reply(reply)
    lp = reply["choices"][0]["logprobs"]
    try:
        texts = [str(t) for t in lp["tokens"]]
        offsets = [int(o) for o in lp["text_offset"]]
    except (TypeError, ValueError):
        raise InvalidReply("choices[0].logprobs.text_offset holds something that is not a number") from None
    top = _top_choices(lp, len(texts))
    usage = reply.get("usage") or {}
    n = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    if isinstance(n, int) and n > len(texts):
        raise LogprobsCutShort(
            f"the reply has log-probabilities for {len(texts)} tokens and counts {n} prompt tokens: they are cut short"
        )
    if not isinstance(n, int) or not 0 < n <= len(texts):
        n = sum(1 for o in offsets if o < len(prompt)) or len(texts)
    elif n >= 2 and offsets[n - 1] >= len(prompt) and "".join(texts[: n - 1]) == prompt:
        # llama-cpp-python counts a BOS in usage that it leaves out of the lists, which then end
        # with the generated token: the prompt's tokens are one fewer
        n -= 1
    end = offsets[n - 1] + len(texts[n - 1])
    shift = end - len(prompt)
    leading_special = n >= 2 and shift == len(texts[0]) and "".join(texts[1:n]) == prompt
    if shift < 0:
        raise LogprobsCutShort(
            f"the reply's tokens end at character {end} of a prompt of {len(prompt)}: its log-probabilities are cut short"
        )
    if shift != 0 and not leading_special:
        raise OffsetMismatch(
            f"the server's token offsets end at {end} for a prompt of {len(prompt)} characters "
            "(tokens decoded one by one do not add up to the prompt text), so the context/continuation "
            "boundary cannot be placed"
        )
    values = [_logprob(lp["token_logprobs"][i], i, texts[i]) for i in range(n)]
    return PromptTokens(texts[:n], values, offsets[:n], top[:n], shift)


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
            raise InvalidReply(f"token {i} ({tokens.texts[i]!r}) has no log-probability")
        total += value
        count += 1
        top = tokens.top[i]
        greedy = greedy and bool(top) and value >= max(float(v) for v in top.values()) - GREEDY_TOLERANCE
    return LoglikelihoodResult(total, count, greedy)


def listed_prompt_tokens(reply: dict[str, Any], count: int) -> PromptTokens:
    """The first ``count`` listed tokens of ``reply``, whatever their texts and offsets say.

    For a boundary placed from token ids or a context's own echo, where the texts need not add up to
    the prompt (llama-cpp-python drops a character split across byte-level tokens from them).
    """
    check_echo_reply(reply)
    lp = reply["choices"][0]["logprobs"]
    texts = [str(t) for t in lp["tokens"]]
    if count < 1 or len(texts) < count:
        raise LogprobsCutShort(
            f"the reply lists {len(texts)} tokens where the server's tokenizer counts {count} prompt tokens: "
            "its log-probabilities are cut short"
        )
    top = _top_choices(lp, len(texts))
    try:
        offsets = [int(o) for o in lp["text_offset"][:count]]
    except (TypeError, ValueError):
        offsets = [0] * count
    values = [_logprob(lp["token_logprobs"][i], i, texts[i]) for i in range(count)]
    return PromptTokens(texts[:count], values, offsets, top[:count], 0)


def listed_prompt_count(reply: dict[str, Any], prompt: str) -> int:
    """How many listed tokens belong to the prompt when no tokenizer says.

    A reply that lists more tokens than ``usage.prompt_tokens`` lists the generated one
    after them. Else (llama-cpp-python lists one fewer than it counts, leaving out a BOS or
    the generated token): the tokens that start inside the prompt; its offsets come from
    decoding each prefix, so they fall short where it drops characters but a generated
    token still starts at the prompt's end.
    """
    check_echo_reply(reply)
    lp = reply["choices"][0]["logprobs"]
    usage = reply.get("usage") or {}
    counted = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    listed = len(lp["tokens"])
    if isinstance(counted, int) and not isinstance(counted, bool):
        if 0 < counted < listed:
            return counted
        if counted > listed + 1:  # one fewer is a BOS left out of the lists
            raise LogprobsCutShort(
                f"the reply has log-probabilities for {listed} tokens and counts {counted} prompt tokens: they are cut short"
            )
    try:
        offsets = [int(o) for o in lp["text_offset"]]
    except (TypeError, ValueError):
        raise InvalidReply("choices[0].logprobs.text_offset holds something that is not a number") from None
    return sum(1 for o in offsets if o < len(prompt)) or len(offsets)
