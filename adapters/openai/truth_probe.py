"""The truth probe: known-answer texts a server must score plausibly and aligned before anything is scored.

Five texts, each asked once, never from the reply cache (a cached reply says
nothing about the server answering now): a counting sequence and a repeated
phrase, whose token texts can be trusted and whose tokens a trained model
predicts well; a Chinese and a Korean sentence and a Māori text ending in a
macron, where tokens split characters into bytes. The probe

1. decides how the context/continuation boundary is placed
   (``model.boundary_source``; ``boundaries.py``): ``auto`` takes the server's
   tokenize route when it has one and its counts match the echo's lists and
   usage, else the reply's offsets when they add up on every probe text, else
   an echo of the context alone where the replies show they cover the whole
   prompt. A reply that does not fit a source is asked again before the source
   is given up (one reply cut short by a passing fault never decides), and why
   the source was chosen is logged and kept with the run's provenance
   (``findings["boundary reason"]``);
2. checks every text's boundary falls inside it under that plan, with a
   finite log-probability for every continuation token;
3. checks the ASCII texts' log-probabilities are aligned and plausible
   (``alignment.py``): top choices one position off, values above their
   position's top choice, or a counting sequence scored far below the model's
   own guesses refuse the server.

A failure raises ``TruthProbeError`` (a ``CapabilityError``: what the server
says cannot be scored) naming the server, the check, the text and the likely
cause, within the few requests the probe makes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import structlog
from culturebias.adapters.openai.alignment import IMPLAUSIBLE_GAP, IMPLAUSIBLE_MEAN, mean_value, measure
from culturebias.adapters.openai.boundaries import BoundaryPlan, BoundarySetting, continuation_start
from culturebias.adapters.openai.client import ApiClient, ApiError, InvalidReply, InvalidReplyError, ServerUnavailableError
from culturebias.adapters.openai.echo_logprobs import (
    NoPromptLogprobs,
    PromptTokens,
    check_echo_reply,
    continuation_start as offsets_start,
    counted_prompt_tokens,
    echoed_prompt_tokens,
    listed_prompt_count,
    listed_prompt_tokens,
    prompt_tokens,
    reply_usage,
    spells_prompt,
)
from culturebias.adapters.openai.token_ids import TokenIds, find_tokenize_route
from culturebias.domain.errors import CapabilityError

CAPABILITY = "continuation log-likelihood (prompt log-probabilities from /completions with echo=true and logprobs)"
TRUTH = "truthful prompt log-probabilities"
AUTH_STATUS = {401, 403, 407}


@dataclass(frozen=True)
class ProbeText:
    name: str
    context: str
    continuation: str
    ascii: bool = False  # token texts can be trusted: alignment is checked on it

    @property
    def text(self) -> str:
        return self.context + self.continuation


COUNTING = ProbeText("counting sequence", "1, 2, 3, 4, 5, 6, 7, 8,", " 9, 10, 11, 12, 13, 14, 15, 16", ascii=True)
PROBE_TEXTS = (
    COUNTING,
    ProbeText("repeated phrase", "the cat sat on the mat. the cat sat on the mat.", " the cat sat on the mat.", ascii=True),
    ProbeText("Chinese sentence", "台灣是一個", "美麗的島嶼。"),
    ProbeText("Korean sentence", "한국어로 된 ", "문장입니다."),
    ProbeText("text ending in a multi-byte character", "Kia ora, ko Tāmaki Makaurau", " tēnei, ka pai tēnā"),
)


class TruthProbeError(CapabilityError):
    def __init__(self, server: str, check: str, text: ProbeText | None, finding: str, cause: str):
        self.check = check
        on = f" on the {text.name} {text.text!r}" if text is not None else ""
        super().__init__("openai", TRUTH, f"{server} failed the truth probe's {check} check{on}: {finding}. Likely cause: {cause}")


@dataclass(frozen=True)
class ProbeOutcome:
    plan: BoundaryPlan
    token_ids: TokenIds | None
    findings: dict[str, str]  # check → what it measured, for the log


SHIFT_CAUSE = (
    "the server scores each prompt token from the logits one position {direction} (llama-cpp-python's server does "
    "this for models without a BOS token); no number it gives can be trusted. Use a server whose prompt "
    "log-probabilities are aligned (vLLM, or llama-cpp-python with a model that adds a BOS), or score the same "
    "weights with model.backend=hf or onnx"
)
UNVERIFIABLE_CAUSE = (
    "without a tokenize route, neither the server's token texts nor its offsets show that a reply covers the whole "
    "prompt, so a reply cut short could not be told from a whole one; use a server with a tokenize route "
    "(llama-cpp-python, vLLM), or score the same weights with model.backend=hf or onnx"
)
# A reply that does not fit a boundary source is asked again this often before the source is given up.
REASKS = 2
DROPPED_CAUSE = (
    "the server drops characters split across byte-level tokens from its token texts, so its offsets do not add up; "
    "set model.boundary_source=tokenize (the server's tokenize route) or context-echo"
)


class TruthProbe:
    def __init__(
        self,
        client: ApiClient,
        root: ApiClient,
        model: str,
        setting: BoundarySetting,
        rule: str,
        body: Callable[[str], dict[str, Any]],  # Any: JSON request bodies and replies of the OpenAI-compatible API
    ):
        self._client = client
        self._root = root
        self._model = model
        self._setting = setting
        self._rule = rule
        self._body = body
        self.where = f"{client.public_base} (model {model!r})"
        self._log = structlog.get_logger("culturebias.openai")
        self._asked_again: list[str] = []

    # -- asking --------------------------------------------------------------------------
    def _echo(self, prompt: str, whole: bool = False, tolerant: bool = True) -> dict[str, Any]:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        """A fresh reply for ``prompt``; ``whole``: it must show it covers the prompt (ASCII texts, whose token
        texts can be trusted, and the contexts of a context echo), else it is asked again like any invalid reply."""

        def shape(body: dict[str, Any], reply: dict[str, Any]) -> None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
            try:
                check_echo_reply(reply)
            except NoPromptLogprobs as error:  # the server's way, not a passing fault
                raise CapabilityError("openai", CAPABILITY, f"{self.where}: {error}") from None
            # whole and finite (else asked again, like any reply): a passing fault is no finding
            if whole:
                echoed_prompt_tokens(reply, prompt, tolerant)
            else:
                listed_prompt_tokens(reply, listed_prompt_count(reply, prompt))

        try:
            return self._client.post("completions", self._body(prompt), check=shape, use_cache=False)
        except ServerUnavailableError as error:
            raise ServerUnavailableError(
                f"the truth probe could not reach {self.where}: {error}. The run stops before anything is asked; "
                "an unreachable server is not a missing capability, so protocol.mode=auto does not switch method for it",
                status=error.status,
                endpoint=error.endpoint,
            ) from None
        except InvalidReplyError as error:
            raise InvalidReplyError(
                f"the truth probe got no valid reply from {self.where}: {error}",
                reason=error.reason,
                attempts=error.attempts,
                endpoint=error.endpoint,
            ) from None
        except ApiError as error:
            if error.status in AUTH_STATUS:  # who is asking, not what the server can do
                raise
            # a 4xx: the server does not take these parameters, or has no such route or model for them
            raise CapabilityError("openai", CAPABILITY, str(error)) from None

    # -- the probe -----------------------------------------------------------------------
    def run(self) -> ProbeOutcome:
        findings: dict[str, str] = {}
        replies: dict[str, dict[str, Any]] = {}  # Any: JSON request bodies and replies of the OpenAI-compatible API
        self._asked_again = []
        # The ASCII texts first, each checked as it comes: a lying server is refused after one or two
        # requests (a server that sorts its whole vocabulary per prompt token takes seconds for each).
        for text in PROBE_TEXTS:
            replies[text.name] = self._echo(text.text, whole=text.ascii)
            if text.ascii:
                findings[text.name] = self._alignment_check(text, _ascii_tokens(replies[text.name], text))
        plan, token_ids, reason = self._plan(replies, findings)
        findings["boundary"] = plan.describe()
        findings["boundary reason"] = reason
        for text in PROBE_TEXTS:
            self._boundary_check(text, replies[text.name], plan, token_ids)
        return ProbeOutcome(plan, token_ids if plan.source == "tokenize" else None, findings)

    def _plan(self, replies: dict[str, dict[str, Any]], findings: dict[str, str]) -> tuple[BoundaryPlan, TokenIds | None, str]:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        """The first boundary source (of those the setting allows) that every probe reply fits, and why.

        A reply that does not fit a source is asked again (``REASKS`` times) before the source is given up:
        one reply cut short by a passing fault never decides how a whole run places its boundaries.
        """
        passed_over: list[str] = []
        if self._setting in ("auto", "tokenize"):
            found = find_tokenize_route(self._root, self._model, COUNTING.text)
            if found is None:
                finding = "the server has no tokenize route (tried /extras/tokenize and /tokenize)"
                if self._setting == "tokenize":
                    raise TruthProbeError(
                        self.where, "tokenize", None, finding,
                        "not a llama-cpp-python or vLLM server; set model.boundary_source=auto, offsets or context-echo",
                    )
                passed_over.append(f"not tokenize: {finding}")
            else:
                plan, failure = self._tokenize_fit(found, replies, findings)
                if plan is not None and plan.usage_offset is None:
                    ids = found.of([t.text for t in PROBE_TEXTS])
                    offset = plan.listed_offset
                    plan = replace(plan, exact_texts=self._exact_texts(replies, lambda t, r: len(ids[t.text]) + offset))
                if plan is not None:
                    usage = "its usage counts the same" if plan.usage_offset is not None else "the echoed tokens reach each text's end"
                    return plan, found, self._reason(
                        f"the tokenize route {found.where} counts every probe text's tokens and {usage}", passed_over
                    )
                assert failure is not None
                text, finding = failure
                if self._setting == "tokenize":
                    raise TruthProbeError(
                        self.where, "tokenize", text, finding,
                        "the tokenize route serves another model or tokenizer; set model.boundary_source=offsets or context-echo",
                    )
                passed_over.append(f"not tokenize: {_on(text)}{finding}")
        if self._setting in ("auto", "offsets"):
            failure = self._fit(replies, findings, lambda text, reply: prompt_tokens(reply, text.text))
            if failure is None:
                return BoundaryPlan("offsets"), None, self._reason("the reply's offsets add up to every probe text", passed_over)
            text, finding = failure
            if self._setting == "offsets":
                raise TruthProbeError(self.where, "offsets", text, finding, DROPPED_CAUSE)
            passed_over.append(f"not offsets: {_on(text)}{finding}")
        failure = self._fit(replies, findings, lambda text, reply: echoed_prompt_tokens(reply, text.text))
        if failure is not None:
            text, finding = failure
            raise TruthProbeError(self.where, "context-echo", text, finding, UNVERIFIABLE_CAUSE)
        exact = self._exact_texts(replies, lambda text, reply: listed_prompt_count(reply, text.text))
        return BoundaryPlan("context-echo", exact_texts=exact), None, self._reason(
            "each context is echoed alone and its tokens compared with its text's"
            + ("; the token texts spell every probe text exactly, so every reply's must" if exact else ""),
            passed_over,
        )

    @staticmethod
    def _exact_texts(replies: dict[str, dict[str, Any]], count: Callable[[ProbeText, dict[str, Any]], int]) -> bool:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        """Whether every probe reply's prompt token texts spell its text exactly (no split character dropped)."""
        for text in PROBE_TEXTS:
            reply = replies[text.name]
            listed = [str(t) for t in reply["choices"][0]["logprobs"]["tokens"]]
            if not spells_prompt(listed[: count(text, reply)], text.text, tolerant=False):
                return False
        return True

    def _reason(self, chosen: str, passed_over: list[str]) -> str:
        parts = [*passed_over, chosen]
        if self._asked_again:
            parts.append("asked again before deciding: " + "; ".join(self._asked_again))
        return "; ".join(parts)

    def _fit(
        self, replies: dict[str, dict[str, Any]], findings: dict[str, str], check: Callable[[ProbeText, dict[str, Any]], Any]  # Any: JSON request bodies and replies of the OpenAI-compatible API
    ) -> tuple[ProbeText, str] | None:
        """None when every probe text's reply passes ``check``, a reply that fails it being asked again first;
        else the first text that failed every time and what it found."""
        for text in PROBE_TEXTS:
            reply = replies[text.name]
            for attempt in range(REASKS + 1):
                try:
                    check(text, reply)
                    break
                except InvalidReply as error:
                    if attempt == REASKS:
                        return text, str(error)
                    self._asked_again.append(f"the {text.name} ({error})")
                    self._log.warning("truth probe: a reply does not fit; asking again", server=self.where, text=text.name, finding=str(error))
                    reply = self._echo(text.text, whole=text.ascii)
            if reply is not replies[text.name]:
                replies[text.name] = reply
                if text.ascii:
                    findings[text.name] = self._alignment_check(text, _ascii_tokens(reply, text))
        return None

    def _tokenize_fit(
        self, found: TokenIds, replies: dict[str, dict[str, Any]], findings: dict[str, str]  # Any: JSON request bodies and replies of the OpenAI-compatible API
    ) -> tuple[BoundaryPlan | None, tuple[ProbeText | None, str] | None]:
        """The tokenize plan when the route's counts match the echo's lists and usage (else why not)."""
        ids = found.of([t.text for t in PROBE_TEXTS])
        missing = [t for t in PROBE_TEXTS if t.text not in ids]
        if missing:
            return None, (missing[0], f"{found.where} gave no token ids")
        ascii_texts = [t for t in PROBE_TEXTS if t.ascii]
        listed_offsets, usage_offsets = set(), set()
        for text in ascii_texts:  # their replies reach their ends (asked whole): counts can be compared
            reply = replies[text.name]
            listed = [str(x) for x in reply["choices"][0]["logprobs"]["tokens"]]
            fits = [d for d in (0, -1) if _lists_prompt(listed, len(ids[text.text]) + d, text.text)]
            listed_offsets.add(fits[0] if fits else None)
            usage = reply_usage(reply)
            usage_offsets.add(usage - len(ids[text.text]) if usage is not None else None)
        listed_offset = listed_offsets.pop() if len(listed_offsets) == 1 else None
        if listed_offset is None:
            return None, (None, f"the token counts of {found.where} do not match the tokens the completions echo lists")
        usage_offset = usage_offsets.pop() if len(usage_offsets) == 1 else None
        plan = BoundaryPlan("tokenize", found.route.path, listed_offset, usage_offset)
        failure = self._fit(
            replies, findings,
            lambda text, reply: counted_prompt_tokens(reply, text.text, len(ids[text.text]), listed_offset, usage_offset),
        )
        return (plan, None) if failure is None else (None, failure)

    def _boundary_check(self, text: ProbeText, reply: dict[str, Any], plan: BoundaryPlan, token_ids: TokenIds | None) -> PromptTokens:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        """The text's listed prompt tokens; its continuation must start inside it with finite values."""
        try:
            if plan.source == "offsets":
                tokens = prompt_tokens(reply, text.text)
                start = offsets_start(tokens, len(text.context))
            elif plan.source == "tokenize":
                assert token_ids is not None
                ids = token_ids.of([text.context, text.text])
                tokens = counted_prompt_tokens(
                    reply, text.text, len(ids[text.text]), plan.listed_offset, plan.usage_offset, not plan.exact_texts
                )
                start = continuation_start(ids[text.context], ids[text.text], self._rule)[0] + plan.listed_offset
            else:
                tolerant = not plan.exact_texts
                tokens = echoed_prompt_tokens(reply, text.text, tolerant)
                context = echoed_prompt_tokens(self._echo(text.context, True, tolerant), text.context, tolerant)
                start = continuation_start(context.texts, tokens.texts, self._rule)[0]
        except InvalidReply as error:
            cause = DROPPED_CAUSE if not text.ascii else "the server's replies are incomplete"
            raise TruthProbeError(self.where, "boundary", text, str(error), cause) from None
        if not 0 < start < len(tokens.texts):
            raise TruthProbeError(
                self.where, "boundary", text,
                f"the continuation starts at token {start} of {len(tokens.texts)} ({plan.describe()})",
                "the server tokenises the context differently alone and in the text",
            )
        return tokens

    def _alignment_check(self, text: ProbeText, tokens: PromptTokens) -> str:
        start = continuation_start_of_ascii(tokens, text)
        measured = measure(tokens.texts, tokens.logprobs, tokens.top, gap_from=start)
        direction = measured.shifted()
        summary = (
            f"top choice is the token itself at {measured.own} of {measured.positions} positions, "
            f"the next token at {measured.next}, the previous one at {measured.previous}"
        )
        if direction is not None:
            raise TruthProbeError(
                self.where, "alignment", text, f"log-probabilities appear shifted by one token ({direction}): {summary}",
                SHIFT_CAUSE.format(direction=direction),
            )
        if measured.above_top >= 2:
            raise TruthProbeError(
                self.where, "alignment", text,
                f"{measured.above_top} tokens score above the best token at their own position",
                "the server lists log-probabilities at the wrong positions",
            )
        if text is COUNTING:
            if measured.mean_gap is not None and measured.mean_gap > IMPLAUSIBLE_GAP:
                raise TruthProbeError(
                    self.where, "plausibility", text,
                    f"its continuation scores {measured.mean_gap:.1f} nats per token below the model's own top choice "
                    f"(aligned models stay under {IMPLAUSIBLE_GAP:g})",
                    SHIFT_CAUSE.format(direction="late"),
                )
            mean = mean_value(tokens.logprobs, start)
            if measured.mean_gap is None and mean is not None and mean < IMPLAUSIBLE_MEAN:
                raise TruthProbeError(
                    self.where, "plausibility", text,
                    f"its continuation scores {mean:.1f} nats per token (a language model predicts counting far better)",
                    SHIFT_CAUSE.format(direction="late"),
                )
            gap = "n/a" if measured.mean_gap is None else f"{measured.mean_gap:.2f}"
            return f"{summary}; continuation {gap} nats per token below the top choice"
        return summary


def _on(text: ProbeText | None) -> str:
    return f"on the {text.name}: " if text is not None else ""


def _ascii_tokens(reply: dict[str, Any], text: ProbeText) -> PromptTokens:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    """An ASCII text's listed tokens: by its offsets, which add up on ASCII, else by the listing alone."""
    try:
        return prompt_tokens(reply, text.text)
    except InvalidReply:
        return listed_prompt_tokens(reply, listed_prompt_count(reply, text.text))


def continuation_start_of_ascii(tokens: PromptTokens, text: ProbeText) -> int:
    """The first token that ends past the context, from texts that can be trusted on ASCII."""
    texts = tokens.texts
    # a leading special token the server lists (vLLM's "<s>") is no part of the text
    at = -len(texts[0]) if len(texts) > 1 and "".join(texts[1:]) == text.text and "".join(texts) != text.text else 0
    for i, piece in enumerate(texts):
        at += len(piece)
        if at > len(text.context):
            return i
    return len(tokens.texts)


def _lists_prompt(listed: list[str], count: int, prompt: str) -> bool:
    """Whether the first ``count`` listed token texts spell ``prompt`` (a leading special token aside)."""
    if count < 1 or count > len(listed):
        return False
    joined = "".join(listed[:count])
    return joined == prompt or (count >= 2 and "".join(listed[1:count]) == prompt)
