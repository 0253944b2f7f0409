"""A served model's own tokenizer, through the server's tokenize route (at the server's root, not under /v1).

- llama-cpp-python: ``POST /extras/tokenize {"input"}`` → ``{"tokens": [ids]}``;
- vLLM: ``POST /tokenize {"model", "prompt"}`` → ``{"count", "max_model_len", "tokens"}``.

Both tokenise as their completions endpoint does (BOS included where the model
adds one), so a context's ids are a prefix of its text's ids up to the token
that straddles the boundary, whatever the token texts say.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Sequence

from culturebias.adapters.openai.client import ApiClient, ApiError, InvalidReply


@dataclass(frozen=True)
class TokenizeRoute:
    path: str  # relative to the server's root
    text_field: str
    with_model: bool  # the body names the model (vLLM serves several)

    def body(self, model: str, text: str) -> dict[str, Any]:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        body: dict[str, Any] = {self.text_field: text}  # Any: JSON request bodies and replies of the OpenAI-compatible API
        if self.with_model:
            body["model"] = model
        return body


ROUTES = (TokenizeRoute("extras/tokenize", "input", False), TokenizeRoute("tokenize", "prompt", True))
# a route that is not there: not found, not allowed, or a body it does not take
ABSENT_STATUS = {400, 404, 405, 422}


def server_root(client: ApiClient) -> ApiClient:
    """The same client (connections, key, limits, cache) addressed at the server's root: ``.../v1`` dropped."""
    root = copy.copy(client)
    base = client.api_base.rstrip("/")
    root.api_base = base.removesuffix("/v1") if base.endswith("/v1") else base
    root.public_base = client.public_base.rstrip("/").removesuffix("/v1")
    return root


def is_token_ids(value: Any) -> bool:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    return isinstance(value, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in value)


def check_ids(body: dict[str, Any], reply: dict[str, Any]) -> None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    if not is_token_ids(reply.get("tokens")):
        raise InvalidReply("the tokenize reply has no list of token ids under 'tokens'")


class TokenIds:
    """Token ids of texts from one route of one server (replies cached like any other)."""

    def __init__(self, root: ApiClient, model: str, route: TokenizeRoute):
        self._root = root
        self._model = model
        self.route = route
        self._known: dict[str, list[int]] = {}  # asked once per scorer, whatever the disk cache is set to

    @property
    def where(self) -> str:
        return f"{self._root.public_base}/{self.route.path}"

    def of(self, texts: Sequence[str]) -> dict[str, list[int]]:
        unique = [t for t in dict.fromkeys(texts) if t not in self._known]
        replies = self._root.post_all(self.route.path, [self.route.body(self._model, t) for t in unique], check=check_ids)
        self._known.update({text: list(reply["tokens"]) for text, reply in zip(unique, replies) if reply is not None})
        return {text: self._known[text] for text in texts if text in self._known}


def find_tokenize_route(root: ApiClient, model: str, sample: str) -> TokenIds | None:
    """The first route that tokenises ``sample``; None when the server has none (a hosted API)."""
    for route in ROUTES:
        try:
            reply = root.post(route.path, route.body(model, sample), use_cache=False)
        except ApiError as error:
            if error.status in ABSENT_STATUS:
                continue
            raise
        try:
            check_ids({}, reply)
        except InvalidReply:  # answered, but not with token ids (a proxy's page, another API)
            continue
        if reply["tokens"]:
            return TokenIds(root, model, route)
    return None
