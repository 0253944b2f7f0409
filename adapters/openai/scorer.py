"""Continuation log-likelihood through ``/completions`` with ``echo`` and ``logprobs``.

One request per distinct ``context + continuation``, up to ``max_concurrency`` in
flight: serving engines (vLLM, TGI) batch concurrent requests on the GPU, and a
per-prompt request caches per prompt, so a re-run with a changed subset still
costs nothing for what it shares.
"""

from __future__ import annotations

from typing import Any, Sequence

from culturebias.adapters.openai.client import ApiClient, ApiError, MalformedReply
from culturebias.adapters.openai.echo_logprobs import check_echo_reply, continuation_start, prompt_tokens, score_tokens
from culturebias.domain.errors import CapabilityError
from culturebias.domain.identity import ModelIdentity, ScoreProvenance
from culturebias.domain.requests import LoglikelihoodRequest, LoglikelihoodResult

CAPABILITY = "continuation log-likelihood (prompt log-probabilities from /completions with echo=true and logprobs)"
# Mixed scripts and a multi-byte boundary: offsets that count bytes or replacement
# characters fail here, before a run, instead of misplacing boundaries mid-run.
PROBE = LoglikelihoodRequest(context="The answer is", continuation=" 台灣 yes")


class OpenAIScorer:
    def __init__(self, client: ApiClient, model: str, identity: ModelIdentity, boundary_rule: str = "straddle-to-continuation"):
        self._client = client
        self._model = model
        self._identity = identity
        self._boundary_rule = boundary_rule
        self._checked = False

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
        """Ask the server for prompt log-probabilities once; CapabilityError when it cannot give them."""
        text = PROBE.context + PROBE.continuation
        try:
            reply = self._client.post("completions", self._body(text), use_cache=False)
            check_echo_reply(reply)
            result = self._score_one(PROBE, reply, context_tokens=None)
        except MalformedReply as error:
            raise CapabilityError("openai", CAPABILITY, f"{self._client.public_base} (model {self._model!r}): {error}") from None
        except ApiError as error:
            raise CapabilityError("openai", CAPABILITY, str(error)) from None
        if result.n_tokens == 0:
            raise CapabilityError("openai", CAPABILITY, "the probe's continuation received no scored token")
        self._checked = True

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], progress=None) -> list[LoglikelihoodResult]:
        if not requests:
            return []
        advance = progress.advance if progress is not None else None
        prompts = [r.context + r.continuation for r in requests]
        replies = self._client.post_all("completions", [self._body(p) for p in prompts], check=check_echo_reply, on_done=advance)
        context_counts = self._context_token_counts(requests) if self._boundary_rule == "authors" else {}
        results = []
        for request, reply in zip(requests, replies):
            results.append(self._score_one(request, reply, context_counts.get(request.context)))
        return results

    def _context_token_counts(self, requests: Sequence[LoglikelihoodRequest]) -> dict[str, int]:
        """The authors' rule: a context's token count when tokenised alone (shared contexts asked once)."""
        contexts = sorted({r.context for r in requests if r.context})
        replies = self._client.post_all("completions", [self._body(c) for c in contexts], check=check_echo_reply)
        return {c: len(prompt_tokens(reply, c).texts) for c, reply in zip(contexts, replies)}

    def _score_one(self, request: LoglikelihoodRequest, reply: dict[str, Any], context_tokens: int | None) -> LoglikelihoodResult:
        tokens = prompt_tokens(reply, request.context + request.continuation)
        if context_tokens is None:
            start = continuation_start(tokens, len(request.context))
        else:
            start = min(context_tokens, len(tokens.texts))
        return score_tokens(tokens, start)
