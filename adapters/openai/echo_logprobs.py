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

A server may compute fewer tokens than the prompt holds and say so consistently
(every list, ``usage.prompt_tokens`` and the offsets describe a shorter prompt).
Where the texts or offsets are not trusted to place the boundary, coverage is
still shown before a reply is used: by the server's own token count
(``counted_prompt_tokens``: the tokenize route's count against ``usage``), or by
the token texts reaching the prompt's last character (``echoed_prompt_tokens``),
allowing for characters split across byte-level tokens that a server drops from
its texts or writes as U+FFFD, or by offsets the server counts independently of
its texts reaching the prompt's end. Where the truth probe found the server's
texts exact (it drops no split character), they must spell the prompt exactly;
on a server that drops them, a cut that removes only the byte tokens of a
prompt's last split character leaves texts that a whole reply also gives, and
every other cut is caught.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

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


def check_echo_reply(reply: dict[str, Any]) -> None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    """Raise InvalidReply unless ``choices[0].logprobs`` holds aligned token lists."""
    try:
        logprobs = reply["choices"][0]["logprobs"]
    except (KeyError, IndexError, TypeError):
        raise NoPromptLogprobs("no choices[0].logprobs in the reply") from None
    if not isinstance(logprobs, dict):
        raise NoPromptLogprobs("choices[0].logprobs is empty: the server returned no prompt log-probabilities")
    lists: list[Any] = [logprobs.get(k) for k in ("tokens", "token_logprobs", "text_offset")]  # Any: the reply's JSON
    if not all(isinstance(v, list) for v in lists):
        raise NoPromptLogprobs("choices[0].logprobs lacks tokens, token_logprobs or text_offset")
    if len({len(v) for v in lists}) != 1 or not lists[0]:
        raise InvalidReply("tokens, token_logprobs and text_offset differ in length or are empty")


def check_echo(body: dict[str, Any], reply: dict[str, Any]) -> None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    """The client's check for a scoring request: the reply is whole for the body's prompt."""
    prompt_tokens(reply, str(body.get("prompt", "")))


def _numbers(top: Any) -> bool:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    """A ``top_logprobs`` entry that can say whether a token was the argmax; anything else means unknown."""
    return (
        isinstance(top, dict)
        and bool(top)
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in top.values())
    )


def _top_choices(logprobs: dict[str, Any], count: int) -> list[dict[str, float] | None]:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    """``top_logprobs`` per listed token; an entry that cannot say which token was the argmax is None."""
    top = logprobs.get("top_logprobs")
    raw: list[Any] = top if isinstance(top, list) else []  # Any: the reply's JSON
    return [t if _numbers(t) else None for t in raw] + [None] * max(0, count - len(raw))


def _logprob(value: Any, index: int, text: str) -> float | None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    if value is None:
        if index == 0:
            return None  # nothing predicts the first token (PROTOCOLS §0.1: score tokens 2..n)
        raise InvalidReply(f"prompt token {index} ({text!r}) has no log-probability (null)")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidReply(f"prompt token {index} ({text!r}) has log-probability {value!r}, not a number")
    if not math.isfinite(value):
        raise InvalidReply(f"prompt token {index} ({text!r}) has log-probability {value}, not a finite number")
    return float(value)


def prompt_tokens(reply: dict[str, Any], prompt: str) -> PromptTokens:  # Any: JSON request bodies and replies of the OpenAI-compatible API
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
        greedy = greedy and top is not None and bool(top) and value >= max(float(v) for v in top.values()) - GREEDY_TOLERANCE
    return LoglikelihoodResult(total, count, greedy)


def listed_prompt_tokens(reply: dict[str, Any], count: int) -> PromptTokens:  # Any: JSON request bodies and replies of the OpenAI-compatible API
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


def reply_usage(reply: dict[str, Any]) -> int | None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    """``usage.prompt_tokens`` where the server gives it as a number."""
    usage = reply.get("usage")
    counted = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return counted if isinstance(counted, int) and not isinstance(counted, bool) else None


def _spells(texts: Sequence[str], prompt: str, tolerant: bool) -> bool:
    if not tolerant:
        return "".join(texts) == prompt
    at = 0
    allowance = 0  # characters that the split pieces seen since the last matched character may stand for
    for text in texts:
        if text == "":  # a piece of a split character, held back or dropped
            allowance += 1
        for char in text:
            if char == "\ufffd":  # a piece of a split character, written as U+FFFD
                allowance += 1
                continue
            while at < len(prompt) and prompt[at] != char and allowance > 0:
                at += 1  # a split character the server dropped from its texts
                allowance -= 1
            if at >= len(prompt) or prompt[at] != char:
                return False
            at += 1
            allowance = 0
    return len(prompt) - at <= allowance


def spells_prompt(texts: Sequence[str], prompt: str, tolerant: bool = True) -> bool:
    """Whether token texts are the prompt's, to its last character.

    Exactly, or after a special token the server lists first (vLLM's ``<s>``); ``tolerant``: also with
    characters split across byte-level tokens dropped or written as U+FFFD where the texts show such a
    split (an empty text or a U+FFFD stands in for at most one character each).
    """
    return _spells(texts, prompt, tolerant) or (len(texts) > 1 and _spells(texts[1:], prompt, tolerant))


def reaches_prompt_end(reply: dict[str, Any], count: int, prompt: str, tolerant: bool = True) -> bool:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    """Whether the first ``count`` listed tokens are the whole prompt: their texts spell it (``tolerant``: as
    ``spells_prompt`` allows), or offsets the server counts apart from its texts (llama-cpp-python's
    decoded-prefix lengths) reach its end."""
    lp = reply["choices"][0]["logprobs"]
    texts = [str(t) for t in lp["tokens"]]
    if spells_prompt(texts[:count], prompt, tolerant):
        return True
    try:
        offsets = [int(o) for o in lp["text_offset"]]
    except (TypeError, ValueError):
        return False
    if all(offsets[i + 1] == offsets[i] + len(texts[i]) for i in range(len(offsets) - 1)):
        return False  # offsets counted from the texts say nothing the texts do not
    ends = {len(prompt), len(prompt) + len(texts[0])}  # a leading special token may be counted
    following = offsets[count] if count < len(offsets) else None
    return following in ends or offsets[count - 1] + len(texts[count - 1]) in ends


def echoed_prompt_tokens(reply: dict[str, Any], prompt: str, tolerant: bool = True) -> PromptTokens:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    """The prompt's listed tokens where no tokenizer counts them, shown to cover the whole prompt
    (``tolerant``: by texts that may drop split characters, see ``spells_prompt``)."""
    count = listed_prompt_count(reply, prompt)
    tokens = listed_prompt_tokens(reply, count)
    if not reaches_prompt_end(reply, count, prompt, tolerant):
        raise LogprobsCutShort(
            f"the reply's {count} prompt tokens ({_shown_texts(tokens.texts)}) do not reach the end of the prompt "
            f"({len(prompt)} characters): its log-probabilities are cut short"
        )
    return tokens


def counted_prompt_tokens(
    reply: dict[str, Any], prompt: str, counted: int, listed_offset: int, usage_offset: int | None, tolerant: bool = True  # Any: JSON request bodies and replies of the OpenAI-compatible API
) -> PromptTokens:
    """The prompt's listed tokens where the server's tokenizer counts ``counted`` for it, shown to cover it all.

    ``usage_offset``: how many more tokens ``usage.prompt_tokens`` counts than the tokenizer (found by the
    truth probe); None where the server gives no usable usage, and the texts or offsets must show it.
    """
    tokens = listed_prompt_tokens(reply, counted + listed_offset)
    if usage_offset is not None:
        usage = reply_usage(reply)
        if usage != counted + usage_offset:
            raise LogprobsCutShort(
                f"the reply counts {usage} prompt tokens where the server's tokenizer counts {counted} "
                f"(and {counted + usage_offset} in its usage on the probe texts): it computed another prompt"
            )
    elif not reaches_prompt_end(reply, counted + listed_offset, prompt, tolerant):
        raise LogprobsCutShort(
            f"the reply's {len(tokens.texts)} prompt tokens ({_shown_texts(tokens.texts)}) do not reach the end of the prompt"
        )
    return tokens


def _shown_texts(texts: Sequence[str], limit: int = 60) -> str:
    joined = "".join(texts)
    return repr(joined if len(joined) <= limit else "…" + joined[-limit:])


def listed_prompt_count(reply: dict[str, Any], prompt: str) -> int:  # Any: JSON request bodies and replies of the OpenAI-compatible API
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
