"""Continuation log-likelihood through ``/completions`` with ``echo`` and ``logprobs``.

One request per distinct ``context + continuation``, up to ``max_concurrency`` in
flight: serving engines (vLLM, TGI) batch concurrent requests on the GPU, and a
per-prompt request caches per prompt, so a re-run with a changed subset still
costs nothing for what it shares.

Before anything is scored the truth probe (``truth_probe.py``) asks known-answer
texts and decides how the context/continuation boundary is placed
(``boundaries.py``: the server's token ids, the reply's offsets, or an echo of
the context alone); every score's provenance says which. A server whose
log-probabilities are misaligned or implausible is refused there.

Every reply is checked whole before it is cached or scored; an invalid one is
asked again, and a request that never gets a valid reply scores
``LoglikelihoodResult(nan, 0, False, invalid=True)`` (never a made-up number,
never cached): the protocols count it as an invalid reply and leave its item out
of their metrics. A server that cannot be reached still stops the run
(``ServerUnavailableError``), and so does one that fails the probe
(``TruthProbeError``); an unreachable one is never taken for a missing
capability, so ``protocol.mode=auto`` never switches method because of an outage.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import structlog

from culturebias.adapters.openai.boundaries import BoundaryPlan, BoundarySetting, continuation_start
from culturebias.adapters.openai.client import ApiClient, InvalidReply, InvalidReplyError
from culturebias.adapters.openai.echo_logprobs import (
    PromptTokens,
    check_echo,
    continuation_start as offsets_start,
    counted_prompt_tokens,
    echoed_prompt_tokens,
    prompt_tokens,
    score_tokens,
)
from culturebias.adapters.openai.token_ids import TokenIds
from culturebias.adapters.openai.truth_probe import CAPABILITY, TruthProbe  # noqa: F401  (CAPABILITY: the name tests use)
from culturebias.domain.identity import ModelIdentity, ScoreProvenance
from culturebias.domain.requests import LoglikelihoodRequest, LoglikelihoodResult
from culturebias.ports.recording import BatchSink

# What a request whose replies stayed invalid after the retries scores: nothing (NaN, never 0.0);
# its token count is unknown without a valid reply.
INVALID_SCORE = LoglikelihoodResult(float("nan"), 0, False, invalid=True)
ReplyCheck = Callable[[dict[str, Any], dict[str, Any]], None]  # Any: JSON request bodies and replies of the OpenAI-compatible API


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class OpenAIScorer:
    def __init__(
        self,
        client: ApiClient,
        model: str,
        identity: ModelIdentity,
        boundary_rule: str = "straddle-to-continuation",
        boundary_source: BoundarySetting = "auto",
        root: ApiClient | None = None,
    ):
        self._client = client
        self._root = root or client  # the server's root, where tokenize routes live
        self._model = model
        self._identity = identity
        self._boundary_rule = boundary_rule
        self._boundary_setting = boundary_source
        self._plan: BoundaryPlan | None = None
        self._findings: dict[str, str] | None = None
        self._token_ids: TokenIds | None = None
        self._log = structlog.get_logger("culturebias.openai")

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    @property
    def provenance(self) -> ScoreProvenance:
        return ScoreProvenance(
            backend="openai",
            dtype=self._identity.dtype,
            device="remote",
            batch_size=self._client.max_concurrency,
            padding_side="none",
            boundary_rule=self._boundary_rule,
            boundary_source=self._plan.describe() if self._plan is not None else self._boundary_setting,
        )

    @property
    def probe_findings(self) -> dict[str, str] | None:
        """What the truth probe measured and why it placed boundaries as it does (None before it ran)."""
        return dict(self._findings) if self._findings is not None else None

    def _body(self, prompt: str) -> dict[str, Any]:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        # max_tokens=1: several servers reject 0 (llama-cpp-python takes 0 as "until the context is full");
        # the generated token is dropped by counting the prompt's tokens.
        return {"model": self._model, "prompt": prompt, "max_tokens": 1, "temperature": 0.0, "echo": True, "logprobs": 1}

    def check_loglikelihood(self) -> None:
        """The truth probe (``truth_probe.py``), once per scorer: CapabilityError when the server cannot give truthful prompt log-probabilities."""
        if self._plan is not None:
            return
        probe = TruthProbe(self._client, self._root, self._model, self._boundary_setting, self._boundary_rule, self._body)
        outcome = probe.run()
        self._plan = outcome.plan
        self._findings = outcome.findings
        self._token_ids = outcome.token_ids
        self._log.info("truth probe passed", server=probe.where, **{k.replace(" ", "_"): v for k, v in outcome.findings.items()})

    # -- scoring -----------------------------------------------------------------------
    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], progress=None) -> list[LoglikelihoodResult]:
        if not requests:
            return []
        if self._plan is None:
            self.check_loglikelihood()  # no score before the probe, whoever calls
        assert self._plan is not None
        sink = progress if isinstance(progress, BatchSink) else None
        owners: dict[str, list[int]] = {}
        for index, request in enumerate(requests):
            owners.setdefault(request.context + request.continuation, []).append(index)
        # stored by an interrupted attempt: not asked again
        results: list[LoglikelihoodResult | None] = [sink.known(i) if sink is not None else None for i in range(len(requests))]
        prompts = [p for p, members in owners.items() if any(results[i] is None for i in members)]
        asked = set(prompts)
        starts = self._boundaries([r for r in requests if r.context + r.continuation in asked], prompts)
        check = self._reply_check(starts)

        def scored(prompt: str, reply: dict[str, Any] | None) -> None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
            if progress is not None:
                progress.advance(len(owners[prompt]))
            delivered = {}
            tokens = starts.tokens(prompt, reply) if reply is not None else None  # the reply read once per prompt
            for index in owners[prompt]:
                if results[index] is not None:
                    continue
                result = INVALID_SCORE
                if tokens is not None and reply is not None and starts.usable(requests[index]):
                    result = score_tokens(tokens, starts.start(requests[index], prompt, reply, tokens))
                results[index] = delivered[index] = result
            if sink is not None and delivered:
                sink.deliver(delivered)

        if progress is not None:  # stored by an interrupted attempt: done already
            progress.advance(sum(len(members) for p, members in owners.items() if p not in asked))
        self._replies(prompts, check, None, scored)
        approximate = starts.approximate
        if approximate:
            self._log.warning(
                "boundaries placed at the first token id that differs from the context's own",
                count=approximate,
                total=len(requests),
                why="the context's last tokens merge with the continuation and the server's offsets do not add up",
            )
        return [r if r is not None else INVALID_SCORE for r in results]

    def _replies(self, prompts: Sequence[str], check: ReplyCheck, on_done, on_reply) -> list[dict[str, Any] | None]:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        """A valid reply for every prompt, or None for one that stayed invalid after its retries (logged, never cached)."""
        invalid: dict[int, InvalidReplyError] = {}
        arrived = (lambda index, reply: on_reply(prompts[index], reply)) if on_reply is not None else None
        replies = self._client.post_all(
            "completions",
            [self._body(p) for p in prompts],
            check=check,
            on_done=on_done,
            on_invalid=invalid.__setitem__,
            on_reply=arrived,  # each valid reply handed over (and stored by the run) as it arrives
        )
        if on_reply is not None:
            for index in sorted(invalid):
                on_reply(prompts[index], None)
        if invalid:
            first = min(invalid)
            error = invalid[first]
            self._log.warning(
                "invalid scoring replies counted",
                count=len(invalid),
                total=len(prompts),
                attempts=error.attempts,
                reason=error.reason,
                first_prompt=_shorten(prompts[first]),
                cached_reply_dropped=any(e.cached_reply_dropped for e in invalid.values()),
            )
        return replies

    def _boundaries(self, requests: Sequence[LoglikelihoodRequest], prompts: Sequence[str]) -> "_Boundaries":
        """``requests``: those whose prompts are asked."""
        plan = self._plan
        assert plan is not None
        contexts = list(dict.fromkeys(r.context for r in requests))
        if plan.source == "tokenize":
            assert self._token_ids is not None
            ids = self._token_ids.of(list(dict.fromkeys([*contexts, *prompts])))
            return _TokenIdBoundaries(plan, self._boundary_rule, ids)
        if plan.source == "context-echo":
            echoes: dict[str, PromptTokens] = {}
            asked = [c for c in contexts if c]

            tolerant = not plan.exact_texts

            def keep(context: str, reply: dict[str, Any] | None) -> None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
                if reply is not None:
                    echoes[context] = echoed_prompt_tokens(reply, context, tolerant)

            def whole(body: dict[str, Any], reply: dict[str, Any]) -> None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
                echoed_prompt_tokens(reply, str(body.get("prompt", "")), tolerant)

            self._replies(asked, whole, None, keep)
            return _ContextEchoBoundaries(self._boundary_rule, echoes, tolerant)
        counts: dict[str, int] = {}
        if self._boundary_rule == "authors":  # a context's token count when tokenised alone
            asked = [c for c in contexts if c]

            def count(context: str, reply: dict[str, Any] | None) -> None:  # Any: the reply's JSON
                if reply is not None:
                    counts[context] = len(prompt_tokens(reply, context).texts)

            self._replies(asked, check_echo, None, count)
        return _OffsetBoundaries(self._boundary_rule, counts)

    def _reply_check(self, starts: "_Boundaries") -> ReplyCheck:
        def check(body: dict[str, Any], reply: dict[str, Any]) -> None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
            starts.tokens(str(body.get("prompt", "")), reply)

        return check


class _Boundaries:
    """Where each request's continuation starts in its prompt's reply, under one plan."""

    approximate = 0  # boundaries placed at the first differing token (see boundaries.py)

    def tokens(self, prompt: str, reply: dict[str, Any]) -> PromptTokens:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        raise NotImplementedError

    def start(self, request: LoglikelihoodRequest, prompt: str, reply: dict[str, Any], tokens: PromptTokens) -> int:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        """``tokens``: ``self.tokens(prompt, reply)``, read once for every request of the prompt."""
        raise NotImplementedError

    def usable(self, request: LoglikelihoodRequest) -> bool:
        """False when what the boundary needs for this request never came (its context's reply stayed invalid)."""
        return True


class _OffsetBoundaries(_Boundaries):
    def __init__(self, rule: str, context_counts: dict[str, int]):
        self._rule = rule
        self._counts = context_counts

    def tokens(self, prompt: str, reply: dict[str, Any]) -> PromptTokens:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        return prompt_tokens(reply, prompt)

    def start(self, request: LoglikelihoodRequest, prompt: str, reply: dict[str, Any], tokens: PromptTokens) -> int:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        if self._rule == "authors" and request.context:
            return min(self._counts[request.context], len(tokens.texts))
        return offsets_start(tokens, len(request.context))

    def usable(self, request: LoglikelihoodRequest) -> bool:
        return self._rule != "authors" or not request.context or request.context in self._counts


def _straddle_from_offsets(request: LoglikelihoodRequest, prompt: str, reply: dict[str, Any], listed: int) -> int | None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    """The straddle rule's start from the reply's offsets, where they add up and list the same tokens."""
    try:
        tokens = prompt_tokens(reply, prompt)
    except InvalidReply:
        return None
    return offsets_start(tokens, len(request.context)) if len(tokens.texts) == listed else None


class _TokenIdBoundaries(_Boundaries):
    def __init__(self, plan: BoundaryPlan, rule: str, ids: dict[str, list[int]]):
        self._plan = plan
        self._rule = rule
        self._ids = ids
        self.approximate = 0

    def tokens(self, prompt: str, reply: dict[str, Any]) -> PromptTokens:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        plan = self._plan
        return counted_prompt_tokens(
            reply, prompt, len(self._ids[prompt]), plan.listed_offset, plan.usage_offset, not plan.exact_texts
        )

    def start(self, request: LoglikelihoodRequest, prompt: str, reply: dict[str, Any], tokens: PromptTokens) -> int:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        start, exact = continuation_start(self._ids[request.context], self._ids[prompt], self._rule)
        if not exact:
            placed = _straddle_from_offsets(request, prompt, reply, len(tokens.texts))
            if placed is not None:
                return placed
            self.approximate += 1
        return max(0, start + self._plan.listed_offset)


class _ContextEchoBoundaries(_Boundaries):
    def __init__(self, rule: str, echoes: dict[str, PromptTokens], tolerant: bool):
        self._rule = rule
        self._echoes = echoes
        self._tolerant = tolerant
        self.approximate = 0

    def tokens(self, prompt: str, reply: dict[str, Any]) -> PromptTokens:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        return echoed_prompt_tokens(reply, prompt, self._tolerant)

    def start(self, request: LoglikelihoodRequest, prompt: str, reply: dict[str, Any], tokens: PromptTokens) -> int:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        if not request.context:
            return 0
        start, exact = continuation_start(self._echoes[request.context].texts, tokens.texts, self._rule)
        if not exact:
            placed = _straddle_from_offsets(request, prompt, reply, len(tokens.texts))
            if placed is not None:
                return placed
            self.approximate += 1
        return start

    def usable(self, request: LoglikelihoodRequest) -> bool:
        return not request.context or request.context in self._echoes
