"""Continuation log-likelihood through ``/completions`` with ``echo`` and ``logprobs``.

One request per distinct ``context + continuation``, up to ``max_concurrency`` in
flight: serving engines (vLLM, TGI) batch concurrent requests on the GPU, and a
per-prompt request caches per prompt, so a re-run with a changed subset still
costs nothing for what it shares.

Every reply is checked whole (``echo_logprobs.check_echo``) before it is cached
or scored; an invalid one is asked again, and a request that never gets a valid
reply scores ``LoglikelihoodResult(nan, 0, False, invalid=True)`` (never a
made-up number, never cached): the protocols count it as an invalid reply and
leave its item out of their metrics. A server that cannot be reached still
stops the run (``ServerUnavailableError``).

The capability probe (``check_loglikelihood``) retries transport failures like
any request. Only the server's own answer can show a missing capability (no
prompt log-probabilities, offsets that do not add up, a 4xx refusing the
request); a server that cannot be reached raises ``ServerUnavailableError``, so
``protocol.mode=auto`` never switches method because of an outage.
"""

from __future__ import annotations

from typing import Any, Sequence

import structlog

from culturebias.adapters.openai.client import ApiClient, ApiError, InvalidReplyError, ServerUnavailableError
from culturebias.adapters.openai.echo_logprobs import (
    NoPromptLogprobs,
    OffsetMismatch,
    check_echo,
    continuation_start,
    prompt_tokens,
    score_tokens,
)
from culturebias.domain.errors import CapabilityError
from culturebias.domain.identity import ModelIdentity, ScoreProvenance
from culturebias.domain.requests import LoglikelihoodRequest, LoglikelihoodResult

CAPABILITY = "continuation log-likelihood (prompt log-probabilities from /completions with echo=true and logprobs)"
# Mixed scripts and a multi-byte boundary: offsets that count bytes or replacement
# characters fail here, before a run, instead of misplacing boundaries mid-run.
PROBE = LoglikelihoodRequest(context="The answer is", continuation=" 台灣 yes")
# What a request whose replies stayed invalid after the retries scores: nothing (NaN, never 0.0);
# its token count is unknown without a valid reply.
INVALID_SCORE = LoglikelihoodResult(float("nan"), 0, False, invalid=True)
# Refusals that say who is asking, not what the server can do.
AUTH_STATUS = {401, 403, 407}


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class OpenAIScorer:
    def __init__(self, client: ApiClient, model: str, identity: ModelIdentity, boundary_rule: str = "straddle-to-continuation"):
        self._client = client
        self._model = model
        self._identity = identity
        self._boundary_rule = boundary_rule
        self._checked = False
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
        )

    def _body(self, prompt: str) -> dict[str, Any]:
        # max_tokens=1: several servers reject 0; the generated token is dropped
        # using usage.prompt_tokens.
        return {"model": self._model, "prompt": prompt, "max_tokens": 1, "temperature": 0.0, "echo": True, "logprobs": 1}

    def check_loglikelihood(self) -> None:
        """Ask the server for prompt log-probabilities once (retrying outages); CapabilityError when it cannot give them."""
        where = f"{self._client.public_base} (model {self._model!r})"

        def probe_check(body: dict[str, Any], reply: dict[str, Any]) -> None:
            try:
                check_echo(body, reply)
            except (NoPromptLogprobs, OffsetMismatch) as error:  # the server's way, not a passing fault
                raise CapabilityError("openai", CAPABILITY, f"{where}: {error}") from None

        try:
            reply = self._client.post("completions", self._body(PROBE.context + PROBE.continuation), check=probe_check, use_cache=False)
        except ServerUnavailableError as error:
            raise ServerUnavailableError(
                f"the capability probe could not reach {where}: {error}. The run stops before anything is asked; "
                "an unreachable server is not a missing capability, so protocol.mode=auto does not switch method for it",
                status=error.status,
                endpoint=error.endpoint,
            ) from None
        except InvalidReplyError as error:
            raise InvalidReplyError(
                f"the capability probe got no valid reply from {where}: {error}",
                reason=error.reason,
                attempts=error.attempts,
                endpoint=error.endpoint,
            ) from None
        except ApiError as error:
            if error.status in AUTH_STATUS:
                raise
            raise CapabilityError("openai", CAPABILITY, str(error)) from None
        result = self._score_one(PROBE, reply, context_tokens=None)
        if result.n_tokens == 0:
            raise CapabilityError("openai", CAPABILITY, "the probe's continuation received no scored token")
        self._checked = True

    def _replies(self, prompts: Sequence[str], on_done=None) -> list[dict[str, Any] | None]:
        """A valid reply for every prompt, or None for one that stayed invalid after its retries (logged, never cached)."""
        invalid: dict[int, InvalidReplyError] = {}
        replies = self._client.post_all(
            "completions", [self._body(p) for p in prompts], check=check_echo, on_done=on_done, on_invalid=invalid.__setitem__
        )
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
        return [None if i in invalid else reply for i, reply in enumerate(replies)]

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], progress=None) -> list[LoglikelihoodResult]:
        if not requests:
            return []
        advance = progress.advance if progress is not None else None
        replies = self._replies([r.context + r.continuation for r in requests], advance)
        context_counts = self._context_token_counts(requests) if self._boundary_rule == "authors" else {}
        return [
            self._score_one(request, reply, context_counts.get(request.context))
            if reply is not None and (self._boundary_rule != "authors" or not request.context or context_counts.get(request.context) is not None)
            else INVALID_SCORE
            for request, reply in zip(requests, replies)
        ]

    def _context_token_counts(self, requests: Sequence[LoglikelihoodRequest]) -> dict[str, int | None]:
        """The authors' rule: a context's token count when tokenised alone (shared contexts asked once; None: no valid reply)."""
        contexts = sorted({r.context for r in requests if r.context})
        replies = self._replies(contexts)
        return {c: None if reply is None else len(prompt_tokens(reply, c).texts) for c, reply in zip(contexts, replies)}

    def _score_one(self, request: LoglikelihoodRequest, reply: dict[str, Any], context_tokens: int | None) -> LoglikelihoodResult:
        tokens = prompt_tokens(reply, request.context + request.continuation)
        if context_tokens is None:
            start = continuation_start(tokens, len(request.context))
        else:
            start = min(context_tokens, len(tokens.texts))
        return score_tokens(tokens, start)
