"""Generation through ``/chat/completions`` (chat messages; the server applies its template) or ``/completions``."""

from __future__ import annotations

from typing import Any, Sequence

from culturebias.adapters.openai.client import ApiClient, MalformedReply
from culturebias.domain.identity import ModelIdentity
from culturebias.domain.requests import GenerationParams, GenerationRequest, GenerationResult


def _sampling(params: GenerationParams) -> dict[str, Any]:
    body: dict[str, Any] = {
        "max_tokens": params.max_new_tokens,
        "temperature": params.temperature,
        "top_p": params.top_p,
        "seed": params.seed,
    }
    if params.stop:
        body["stop"] = list(params.stop)
    return body


def check_chat_reply(reply: dict[str, Any]) -> None:
    try:
        content = reply["choices"][0]["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise MalformedReply("no choices[0].message in the reply") from None
    if content is not None and not isinstance(content, str):
        raise MalformedReply("choices[0].message.content is not text")


def check_completion_reply(reply: dict[str, Any]) -> None:
    try:
        text = reply["choices"][0]["text"]
    except (KeyError, IndexError, TypeError):
        raise MalformedReply("no choices[0].text in the reply") from None
    if not isinstance(text, str):
        raise MalformedReply("choices[0].text is not text")


class OpenAIGenerator:
    def __init__(self, client: ApiClient, model: str, identity: ModelIdentity):
        self._client = client
        self._model = model
        self._identity = identity

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    def generate(self, requests: Sequence[GenerationRequest], progress=None) -> list[GenerationResult]:
        advance = progress.advance if progress is not None else None
        chat = [i for i, r in enumerate(requests) if r.messages is not None]
        plain = [i for i, r in enumerate(requests) if r.messages is None]
        texts: dict[int, str] = {}
        chat_bodies = [
            {
                "model": self._model,
                "messages": [{"role": m.role, "content": m.content} for m in requests[i].messages or ()],
                **_sampling(requests[i].params),
            }
            for i in chat
        ]
        for i, reply in zip(chat, self._client.post_all("chat/completions", chat_bodies, check_chat_reply, advance)):
            texts[i] = reply["choices"][0]["message"].get("content") or ""
        plain_bodies = [{"model": self._model, "prompt": requests[i].prompt, **_sampling(requests[i].params)} for i in plain]
        for i, reply in zip(plain, self._client.post_all("completions", plain_bodies, check_completion_reply, advance)):
            texts[i] = reply["choices"][0]["text"]
        return [GenerationResult(texts[i]) for i in range(len(requests))]
