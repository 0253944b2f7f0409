"""HTTP client for OpenAI-compatible servers: concurrency limit, timeouts, bounded retries, validated reply cache.

Retries: 429, 5xx, timeouts, connection errors, unreadable bodies and replies
that fail the endpoint's validation (``check``: no text, log-probabilities
missing, cut short or not finite) are retried at most ``max_retries`` times,
waiting ``Retry-After`` when the server sends it and otherwise an exponential
backoff with jitter. Other 4xx replies fail at once with the server's message.
When the retries run out, the last failure decides the error: an invalid reply
raises ``InvalidReplyError`` (the generator and the scorer count such a lost
reply; the capability probe raises it), anything else ``ServerUnavailableError``.

Only a reply that passed ``check`` is cached, and a cached reply is checked
again when read: one that fails is dropped and the request asked again; every
error that follows says so. The API key is sent in the Authorization header
only; it and every other credential (URL userinfo, key-like query parameters)
are kept out of error messages and logs (``domain/redaction.py``).
"""

from __future__ import annotations

import email.utils
import json
import random
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Sequence
from urllib.parse import unquote, urlsplit, urlunsplit

import structlog
from pydantic import SecretStr

from culturebias.adapters.openai.request_cache import CacheMode, RequestCache, request_key
from culturebias.domain.errors import CultureBiasError
from culturebias.domain.redaction import redact_text, url_secrets

RETRYABLE_STATUS = {408, 409, 425, 429}
# check(body, reply): raises InvalidReply when the reply cannot be used for that request
ReplyCheck = Callable[[dict[str, Any], dict[str, Any]], None]


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


def public_base(api_base: str) -> str:
    """``api_base`` without user:password and query, for logs, identities and cache keys."""
    parts = urlsplit(api_base)
    host = parts.hostname or ""
    if ":" in host:  # IPv6
        host = f"[{host}]"
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())


@dataclass(frozen=True)
class _Failure:
    reason: str
    retry_after: float | None = None
    status: int | None = None
    invalid: bool = False  # a 200 whose reply failed the check (else a transport failure)


class Backoff:
    """Exponential backoff with equal jitter: attempt n waits between d/2 and d, d = min(cap, base·2ⁿ)."""

    def __init__(self, base_s: float = 0.5, cap_s: float = 30.0, retry_after_cap_s: float = 300.0, rng: random.Random | None = None):
        self.base_s = base_s
        self.cap_s = cap_s
        self.retry_after_cap_s = retry_after_cap_s
        self._rng = rng or random.Random()
        self._lock = threading.Lock()

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.retry_after_cap_s)
        ceiling = min(self.cap_s, self.base_s * (2**attempt))
        with self._lock:
            return ceiling / 2 + self._rng.uniform(0, ceiling / 2)


class ApiClient:
    def __init__(
        self,
        api_base: str,
        *,
        api_key: SecretStr | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 5,
        max_concurrency: int = 8,
        cache: RequestCache | None = None,
        cache_mode: CacheMode = "use",
        backoff: Backoff | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: Any = None,
    ):
        import httpx

        parts = urlsplit(api_base)
        # Credentials in api_base stay out of plain attributes: userinfo becomes HTTP basic auth
        # (what httpx would make of it), and the query (e.g. Azure's api-version, or a key) is
        # held as a secret and goes after the endpoint, not before it.
        self.public_base = public_base(api_base)
        self.api_base = self.public_base
        self._query = SecretStr(parts.query)
        auth = None
        if parts.username or parts.password:
            auth = httpx.BasicAuth(unquote(parts.username or ""), unquote(parts.password or ""))
        self._key = api_key
        # Scrubbed from whatever the server echoes: the key, and credentials written into api_base.
        known = ([api_key.get_secret_value()] if api_key is not None else []) + url_secrets(api_base)
        self._secrets = [SecretStr(secret) for secret in known]
        self.max_retries = max(0, max_retries)
        self.max_concurrency = max(1, max_concurrency)
        self.cache = cache if cache_mode != "off" else None
        self.cache_mode = cache_mode
        self._backoff = backoff or Backoff()
        self._sleep = sleep
        self._log = structlog.get_logger("culturebias.openai")
        self._httpx = httpx
        headers = {"Content-Type": "application/json"}
        if api_key is not None:
            headers["Authorization"] = f"Bearer {api_key.get_secret_value()}"
        self._http = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(timeout_s),
            limits=httpx.Limits(max_connections=self.max_concurrency, max_keepalive_connections=self.max_concurrency),
            transport=transport,
            auth=auth,
        )
        self.sent = 0  # HTTP requests actually sent (cache hits excluded), for tests and logs
        self.dropped_from_cache = 0  # cached replies that failed validation when read

    def close(self) -> None:
        self._http.close()

    def _scrub(self, text: str) -> str:
        return redact_text(text, [s.get_secret_value() for s in self._secrets])

    def url(self, endpoint: str) -> str:
        url = f"{self.api_base}/{endpoint.lstrip('/')}"
        query = self._query.get_secret_value()
        return f"{url}?{query}" if query else url

    def post(self, endpoint: str, body: dict[str, Any], check: ReplyCheck | None = None, use_cache: bool = True) -> dict[str, Any]:
        """POST ``body`` as JSON; the validated reply, from the cache when it holds a valid one."""
        cache = self.cache if use_cache else None
        key = request_key(self.public_base, endpoint, body)
        dropped: str | None = None
        if cache is not None and self.cache_mode == "use":
            cached, dropped = self._read_cache(cache, key, endpoint, body, check)
            if cached is not None:
                return cached
        reply = self._post_with_retries(endpoint, body, check, dropped)
        if cache is not None:
            cache.put(key, endpoint, reply)
        return reply

    def _read_cache(
        self, cache: RequestCache, key: str, endpoint: str, body: dict[str, Any], check: ReplyCheck | None
    ) -> tuple[dict[str, Any] | None, str | None]:
        """``(valid cached reply, None)``, ``(None, None)`` when there is none, ``(None, why)`` when it was dropped."""
        try:
            cached = cache.get(key)
            if cached is None:
                return None, None
            _validate(body, cached, check)
            return cached, None
        except (ValueError, InvalidReply) as error:
            reason = str(error)
        cache.drop(key)
        self.dropped_from_cache += 1
        self._log.warning(
            "dropped an invalid cached reply; asking again", endpoint=endpoint, reason=reason, cache=str(cache.path)
        )
        return None, reason

    def post_all(
        self,
        endpoint: str,
        bodies: Sequence[dict[str, Any]],
        check: ReplyCheck | None = None,
        on_done: Callable[[int], None] | None = None,
        on_invalid: Callable[[int, InvalidReplyError], None] | None = None,
    ) -> list[dict[str, Any] | None]:
        """Replies to every body, in order, at most ``max_concurrency`` in flight.

        With ``on_invalid``, a request whose every attempt got an invalid reply
        is handed to it (its entry is None) instead of failing the batch. The
        first request that fails for good cancels the ones not yet started and
        is raised; finished replies stay cached, so a re-run resumes there.
        """
        if not bodies:
            return []
        results: list[dict[str, Any] | None] = [None] * len(bodies)

        def one(index: int) -> None:
            try:
                results[index] = self.post(endpoint, bodies[index], check)
            except InvalidReplyError as error:
                if on_invalid is None:
                    raise
                on_invalid(index, error)
            if on_done is not None:
                on_done(1)

        workers = min(self.max_concurrency, len(bodies))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="openai") as pool:
            futures = [pool.submit(one, i) for i in range(len(bodies))]
            done, pending = wait(futures, return_when=FIRST_EXCEPTION)
            for future in pending:
                future.cancel()
            for future in futures:
                if future.done() and not future.cancelled() and future.exception() is not None:
                    raise future.exception()  # type: ignore[misc]
        return results

    def _post_with_retries(
        self, endpoint: str, body: dict[str, Any], check: ReplyCheck | None, dropped: str | None = None
    ) -> dict[str, Any]:
        url = self.url(endpoint)
        attempt = 0
        while True:
            reply, failure = self._attempt(url, endpoint, body, check)
            if reply is not None:
                return reply
            assert failure is not None
            if attempt >= self.max_retries:
                raise self._gave_up(endpoint, attempt + 1, failure, dropped)
            delay = self._backoff.delay(attempt, failure.retry_after)
            self._log.warning(
                "api retry",
                endpoint=endpoint,
                status=failure.status,
                attempt=attempt + 1,
                wait_s=round(delay, 3),
                reason=failure.reason,
            )
            self._sleep(delay)
            attempt += 1

    def _gave_up(self, endpoint: str, attempts: int, failure: _Failure, dropped: str | None) -> ApiError:
        message = f"{self.public_base}/{endpoint}: giving up after {attempts} attempts: {failure.reason}"
        if dropped is not None and self.cache is not None:
            message += f" (a cached reply to this request was invalid too, {dropped}, and was dropped from {self.cache.path})"
        if failure.invalid:
            return InvalidReplyError(
                message, reason=failure.reason, attempts=attempts, endpoint=endpoint, cached_reply_dropped=dropped is not None
            )
        return ServerUnavailableError(message, status=failure.status, endpoint=endpoint)

    def _attempt(
        self, url: str, endpoint: str, body: dict[str, Any], check: ReplyCheck | None
    ) -> tuple[dict[str, Any] | None, _Failure | None]:
        """One HTTP exchange: ``(reply, None)``, or ``(None, failure)`` when it is worth another try."""
        httpx = self._httpx
        self.sent += 1
        try:
            response = self._http.post(url, json=body)
        except httpx.TimeoutException:
            return None, _Failure("timed out")
        except httpx.TransportError as error:
            return None, _Failure(f"connection failed ({type(error).__name__})")
        status = response.status_code
        if status >= 500 or status in RETRYABLE_STATUS:
            return None, _Failure(f"HTTP {status}", retry_after_seconds(response.headers.get("retry-after")), status)
        if status >= 400:
            raise ApiError(
                f"{self.public_base}/{endpoint} answered HTTP {status}: {self._scrub(_server_message(response.text))}",
                status=status,
                endpoint=endpoint,
            )
        try:
            reply = json.loads(response.text)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None, _Failure("malformed JSON reply", status=status)
        try:
            _validate(body, reply, check)
        except InvalidReply as error:
            return None, _Failure(f"invalid reply: {self._scrub(str(error))}", status=status, invalid=True)
        return reply, None


def _validate(body: dict[str, Any], reply: Any, check: ReplyCheck | None) -> None:
    if not isinstance(reply, dict):
        raise InvalidReply("the reply is not a JSON object")
    if check is not None:
        check(body, reply)


def _server_message(text: str) -> str:
    try:
        data = json.loads(text)
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            return str(data["error"].get("message", text))[:500]
        if isinstance(data, dict) and "message" in data:
            return str(data["message"])[:500]
    except json.JSONDecodeError:
        pass
    return text[:500]
