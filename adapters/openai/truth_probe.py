"""The truth probe: known-answer texts a server must score plausibly and aligned before anything is scored.

Five texts, each asked once, never from the reply cache (a cached reply says
nothing about the server answering now): a counting sequence and a repeated
phrase, whose token texts can be trusted and whose tokens a trained model
predicts well; a Chinese and a Korean sentence and a Māori text ending in a
macron, where tokens split characters into bytes. The probe

1. decides how the context/continuation boundary is placed
   (``model.boundary_source``; ``boundaries.py``): ``auto`` takes the server's
   tokenize route when it has one, else the reply's offsets when they add up
   on every probe text, else an echo of the context alone;
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

from dataclasses import dataclass
from typing import Any, Callable

from culturebias.adapters.openai.alignment import IMPLAUSIBLE_GAP, IMPLAUSIBLE_MEAN, mean_value, measure
from culturebias.adapters.openai.boundaries import BoundaryPlan, BoundarySetting, continuation_start
from culturebias.adapters.openai.client import ApiClient, ApiError, InvalidReply, InvalidReplyError, ServerUnavailableError
from culturebias.adapters.openai.echo_logprobs import (
    NoPromptLogprobs,
    PromptTokens,
    check_echo_reply,
    continuation_start as offsets_start,
    listed_prompt_count,
    listed_prompt_tokens,
    prompt_tokens,
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
        body: Callable[[str], dict[str, Any]],
    ):
        self._client = client
        self._root = root
        self._model = model
        self._setting = setting
        self._rule = rule
        self._body = body
        self.where = f"{client.public_base} (model {model!r})"

    # -- asking --------------------------------------------------------------------------
    def _echo(self, prompt: str) -> dict[str, Any]:
        def shape(body: dict[str, Any], reply: dict[str, Any]) -> None:
            try:
                check_echo_reply(reply)
            except NoPromptLogprobs as error:  # the server's way, not a passing fault
                raise CapabilityError("openai", CAPABILITY, f"{self.where}: {error}") from None
            # whole and finite (else asked again, like any reply): a passing fault is no finding
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
        replies: dict[str, dict[str, Any]] = {}
        # The ASCII texts first, each checked as it comes: a lying server is refused after one or two
        # requests (a server that sorts its whole vocabulary per prompt token takes seconds for each).
        for text in PROBE_TEXTS:
            replies[text.name] = self._echo(text.text)
            if text.ascii:
                findings[text.name] = self._alignment_check(text, _ascii_tokens(replies[text.name], text))
        token_ids, listed_offset = self._tokenize_plan(replies)
        offsets_failure = self._offsets_failure(replies)
        plan = self._choose(token_ids, listed_offset, offsets_failure)
        findings["boundary"] = plan.describe()
        for text in PROBE_TEXTS:
            self._boundary_check(text, replies[text.name], plan, token_ids)
        return ProbeOutcome(plan, token_ids if plan.source == "tokenize" else None, findings)

    def _tokenize_plan(self, replies: dict[str, dict[str, Any]]) -> tuple[TokenIds | None, int | None]:
        """The server's tokenize route and how its counts relate to the lists of its echo (None: unusable)."""
        if self._setting not in ("auto", "tokenize"):
            return None, None
        found = find_tokenize_route(self._root, self._model, COUNTING.text)
        if found is None:
            if self._setting == "tokenize":
                raise TruthProbeError(
                    self.where, "tokenize", None, "the server has no tokenize route (tried /extras/tokenize and /tokenize)",
                    "not a llama-cpp-python or vLLM server; set model.boundary_source=auto, offsets or context-echo",
                )
            return None, None
        ascii_texts = [t for t in PROBE_TEXTS if t.ascii]
        ids = found.of([t.text for t in ascii_texts])
        offsets = set()
        for text in ascii_texts:
            listed = [str(x) for x in replies[text.name]["choices"][0]["logprobs"]["tokens"]]
            fits = [d for d in (0, -1) if _lists_prompt(listed, len(ids.get(text.text, [])) + d, text.text)]
            offsets.add(fits[0] if fits else None)
        if len(offsets) == 1 and None not in offsets:
            return found, offsets.pop()
        if self._setting == "tokenize":
            raise TruthProbeError(
                self.where, "tokenize", None,
                f"the token counts of {found.where} do not match the tokens the completions echo lists",
                "the tokenize route serves another model or tokenizer; set model.boundary_source=offsets or context-echo",
            )
        return None, None

    def _offsets_failure(self, replies: dict[str, dict[str, Any]]) -> tuple[ProbeText, str] | None:
        for text in PROBE_TEXTS:
            try:
                prompt_tokens(replies[text.name], text.text)
            except InvalidReply as error:
                return text, str(error)
        return None

    def _choose(self, token_ids: TokenIds | None, listed_offset: int | None, offsets_failure: tuple[ProbeText, str] | None) -> BoundaryPlan:
        if token_ids is not None and listed_offset is not None:
            return BoundaryPlan("tokenize", token_ids.route.path, listed_offset)
        if self._setting == "offsets" and offsets_failure is not None:
            text, finding = offsets_failure
            raise TruthProbeError(self.where, "offsets", text, finding, DROPPED_CAUSE)
        if self._setting in ("auto", "offsets") and offsets_failure is None:
            return BoundaryPlan("offsets")
        return BoundaryPlan("context-echo")

    def _boundary_check(self, text: ProbeText, reply: dict[str, Any], plan: BoundaryPlan, token_ids: TokenIds | None) -> PromptTokens:
        """The text's listed prompt tokens; its continuation must start inside it with finite values."""
        try:
            if plan.source == "offsets":
                tokens = prompt_tokens(reply, text.text)
                start = offsets_start(tokens, len(text.context))
            elif plan.source == "tokenize":
                assert token_ids is not None
                ids = token_ids.of([text.context, text.text])
                tokens = listed_prompt_tokens(reply, len(ids[text.text]) + plan.listed_offset)
                start = continuation_start(ids[text.context], ids[text.text], self._rule)[0] + plan.listed_offset
            else:
                tokens = listed_prompt_tokens(reply, listed_prompt_count(reply, text.text))
                context_reply = self._echo(text.context)
                context = listed_prompt_tokens(context_reply, listed_prompt_count(context_reply, text.context))
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


def _ascii_tokens(reply: dict[str, Any], text: ProbeText) -> PromptTokens:
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
