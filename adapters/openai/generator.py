"""Generation through ``/chat/completions`` (chat messages; the server applies its template) or ``/completions``.

A reply must hold text: ``choices[0].message.content`` (chat) or
``choices[0].text`` (completions) as a string. ``content: null`` (a reasoning
model that ran out of tokens, a tool call, a filtered reply) is not an empty
answer: it is retried like a transport failure, and when every attempt fails
the request's result is ``GenerationResult("", invalid=True)``: never cached,
counted by the protocol as an invalid reply.

When ``progress`` is the run's ``BatchSink``, each result is delivered as its
reply arrives (so a run that gives up midway keeps every reply it got), and a
request whose result the sink already knows (stored by an interrupted attempt)
is not asked again.
"""

from __future__ import annotations

from typing import Any, Sequence

import structlog

from culturebias.adapters.openai.client import ApiClient, InvalidReply, InvalidReplyError
from culturebias.domain.identity import ModelIdentity
from culturebias.domain.requests import GenerationParams, GenerationRequest, GenerationResult, message_dicts
from culturebias.ports.recording import BatchSink


def _sampling(params: GenerationParams) -> dict[str, Any]:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    """The request's decoding fields. A value the run leaves to the model is left out, so the server's
    default applies; ``top_k`` and ``repetition_penalty`` are vLLM's (and most servers') extensions.
    A greedy body is what it was before these settings existed (temperature 0, top_p 1, seed 0)."""
    body: dict[str, Any] = {"max_tokens": params.max_new_tokens}  # Any: JSON request bodies and replies of the OpenAI-compatible API
    if params.mode == "greedy":
        body |= {"temperature": params.temperature, "top_p": params.top_p, "seed": params.seed}
    else:
        chosen = {"temperature": params.temperature, "top_p": params.top_p, "top_k": params.top_k}
        body |= {k: v for k, v in chosen.items() if v is not None}
        if params.repetition_penalty is not None:
            body["repetition_penalty"] = params.repetition_penalty
        body["seed"] = params.seed
    if params.stop:
        body["stop"] = list(params.stop)
    return body


def check_chat_reply(body: dict[str, Any], reply: dict[str, Any]) -> None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    _check_text(reply, ("message", "content"))


def check_completion_reply(body: dict[str, Any], reply: dict[str, Any]) -> None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    _check_text(reply, ("text",))


def _check_text(reply: dict[str, Any], keys: tuple[str, ...]) -> None:  # Any: a JSON reply of the OpenAI-compatible API
    """InvalidReply unless ``reply["choices"][0]`` holds text under ``keys`` (e.g. message, content)."""
    where = ".".join(("choices[0]", *keys))
    try:
        text = reply["choices"][0]
        for key in keys:
            text = text[key]
    except (KeyError, IndexError, TypeError):
        raise InvalidReply(f"no {where} in the reply") from None
    if text is None:
        raise InvalidReply(f"{where} is null: the reply holds no text")
    if not isinstance(text, str):
        raise InvalidReply(f"{where} is not text")


class OpenAIGenerator:
    def __init__(self, client: ApiClient, model: str, identity: ModelIdentity):
        self._client = client
        self._model = model
        self._identity = identity
        self._log = structlog.get_logger("culturebias.openai")

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    def generate(self, requests: Sequence[GenerationRequest], progress=None) -> list[GenerationResult]:
        advance = progress.advance if progress is not None else None
        sink = progress if isinstance(progress, BatchSink) else None
        results: dict[int, GenerationResult] = {}
        if sink is not None:
            for i in range(len(requests)):
                known = sink.known(i)
                if isinstance(known, GenerationResult):
                    results[i] = known
        todo = [i for i in range(len(requests)) if i not in results]
        chat = [i for i in todo if requests[i].messages is not None]
        plain = [i for i in todo if requests[i].messages is None]
        chat_bodies = [
            {
                "model": self._model,
                "messages": message_dicts(requests[i].messages or ()),
                **_sampling(requests[i].params),
            }
            for i in chat
        ]
        plain_bodies = [{"model": self._model, "prompt": requests[i].prompt, **_sampling(requests[i].params)} for i in plain]
        for endpoint, indices, bodies, check, text_of in (
            ("chat/completions", chat, chat_bodies, check_chat_reply, _chat_text),
            ("completions", plain, plain_bodies, check_completion_reply, _completion_text),
        ):
            invalid: dict[int, InvalidReplyError] = {}
            on_reply = None
            if sink is not None:
                # called on this thread as each reply arrives: the run's store commits it as it goes
                def on_reply(position: int, reply: dict[str, Any], indices=indices, text_of=text_of) -> None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
                    sink.deliver({indices[position]: GenerationResult(text_of(reply))})

            replies = self._client.post_all(
                endpoint, bodies, check, advance, on_invalid=invalid.__setitem__, on_reply=on_reply
            )
            for position, (i, reply) in enumerate(zip(indices, replies)):
                results[i] = GenerationResult("", invalid=True) if reply is None else GenerationResult(text_of(reply))
            if invalid:
                first = invalid[min(invalid)]
                self._log.warning(
                    "invalid replies counted", endpoint=endpoint, count=len(invalid), attempts=first.attempts, reason=first.reason
                )
        return [results[i] for i in range(len(requests))]


def _chat_text(reply: dict[str, Any]) -> str:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    return reply["choices"][0]["message"]["content"]


def _completion_text(reply: dict[str, Any]) -> str:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    return reply["choices"][0]["text"]
