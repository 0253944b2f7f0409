"""What an OpenAI-compatible request can end in: the errors, and the check a reply must pass.

``ApiError`` is a request that failed for good; ``InvalidReply`` is what a reply check
(``ReplyCheck``) raises for a 200 whose reply cannot be used (the client retries it);
``InvalidReplyError`` is every attempt ending in such a reply; ``ServerUnavailableError``
a server that could not be reached or did not keep up. The client (``client.py``) raises
them and re-exports them under its own name.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from culturebias.domain.errors import CultureBiasError

# check(body, reply): raises InvalidReply when the reply cannot be used for that request
ReplyCheck = Callable[[dict[str, Any], dict[str, Any]], None]  # Any: JSON request bodies and replies of the OpenAI-compatible API


class ApiError(CultureBiasError):
    """A request failed for good (non-retryable status, or retries exhausted)."""

    def __init__(self, message: str, *, status: int | None = None, endpoint: str = ""):
        self.status = status
        self.endpoint = endpoint
        super().__init__(message)


class InvalidReply(ApiError):
    """Raised by a reply check: the server answered 200 with a reply that cannot be used (retried)."""


MalformedReply = InvalidReply  # the name earlier versions used


class InvalidReplyError(ApiError):
    """Every attempt, the last one included, got an invalid reply: nothing was cached."""

    def __init__(self, message: str, *, reason: str, attempts: int, endpoint: str = "", cached_reply_dropped: bool = False):
        self.reason = reason
        self.attempts = attempts
        self.cached_reply_dropped = cached_reply_dropped
        super().__init__(message, status=200, endpoint=endpoint)


class ServerUnavailableError(ApiError):
    """The server could not be reached, timed out, or kept answering 429/5xx or unreadable bodies."""


def validate_reply(body: dict[str, Any], reply: Any, check: ReplyCheck | None) -> None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    """Raise ``InvalidReply`` unless ``reply`` is a JSON object that passes ``check`` for ``body``."""
    if not isinstance(reply, dict):
        raise InvalidReply("the reply is not a JSON object")
    if check is not None:
        check(body, reply)


def server_message(text: str) -> str:
    """The message of a server's error body (OpenAI's ``{"error": {"message"}}`` or a plain ``message``), at most 500 characters."""
    try:
        data = json.loads(text)
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            return str(data["error"].get("message", text))[:500]
        if isinstance(data, dict) and "message" in data:
            return str(data["message"])[:500]
    except json.JSONDecodeError:
        pass
    return text[:500]
