"""HTTP client for OpenAI-compatible servers: concurrency limit, timeouts, bounded retries, reply cache.

Retries: 429, 5xx, timeouts, connection errors and malformed replies are retried
at most ``max_retries`` times, waiting ``Retry-After`` when the server sends it
and otherwise an exponential backoff with jitter. Other 4xx replies fail at once
with the server's message. The API key is sent in the Authorization header
only; it is scrubbed from every error message and never logged.
"""

from __future__ import annotations

import email.utils
import json
import random
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from datetime import datetime, timezone
from typing import Any, Callable, Sequence
from urllib.parse import urlsplit, urlunsplit

import structlog
from pydantic import SecretStr

from culturebias.adapters.openai.request_cache import RequestCache, request_key
from culturebias.domain.errors import CultureBiasError

RETRYABLE_STATUS = {408, 409, 425, 429}
ReplyCheck = Callable[[dict[str, Any]], None]


class ApiError(CultureBiasError):
    """A request failed for good (non-retryable status, or retries exhausted)."""

    def __init__(self, message: str, *, status: int | None = None, endpoint: str = ""):
        self.status = status
        self.endpoint = endpoint
        super().__init__(message)


class MalformedReply(ApiError):
    """The server answered 200 with a body that is not the JSON shape the endpoint promises."""


def public_base(api_base: str) -> str:
    """``api_base`` without user:password, for logs and identities."""
    parts = urlsplit(api_base)
    host = parts.hostname or ""
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
        backoff: Backoff | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: Any = None,
    ):
        import httpx

        self.api_base = api_base.rstrip("/")
        self.public_base = public_base(api_base)
        self._key = api_key
        self.max_retries = max(0, max_retries)
        self.max_concurrency = max(1, max_concurrency)
        self.cache = cache
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
        )
        self.sent = 0  # HTTP requests actually sent (cache hits excluded), for tests and logs

    def close(self) -> None:
        self._http.close()

    def _scrub(self, text: str) -> str:
        if self._key is not None and self._key.get_secret_value():
            text = text.replace(self._key.get_secret_value(), "**redacted**")
        return text

    def url(self, endpoint: str) -> str:
        return f"{self.api_base}/{endpoint.lstrip('/')}"

    def post(self, endpoint: str, body: dict[str, Any], check: ReplyCheck | None = None, use_cache: bool = True) -> dict[str, Any]:
        """POST ``body`` as JSON; the parsed reply, from the cache when it holds one."""
        key = request_key(self.public_base, endpoint, body)
        if use_cache and self.cache is not None:
            cached = self.cache.get(key)
            if cached is not None:
                return cached
        reply = self._post_with_retries(endpoint, body, check)
        if use_cache and self.cache is not None:
            self.cache.put(key, endpoint, reply)
        return reply

    def post_all(
        self,
        endpoint: str,
        bodies: Sequence[dict[str, Any]],
        check: ReplyCheck | None = None,
        on_done: Callable[[int], None] | None = None,
    ) -> list[dict[str, Any]]:
        """Replies to every body, in order, at most ``max_concurrency`` in flight.

        The first request that fails for good cancels the ones not yet started
        and is raised; finished replies stay cached, so a re-run resumes there.
        """
        if not bodies:
            return []
        results: list[dict[str, Any] | None] = [None] * len(bodies)

        def one(index: int) -> None:
            results[index] = self.post(endpoint, bodies[index], check)
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
        return results  # type: ignore[return-value]

    def _post_with_retries(self, endpoint: str, body: dict[str, Any], check: ReplyCheck | None) -> dict[str, Any]:
        url = self.url(endpoint)
        attempt = 0
        while True:
            reply, failure, retry_after, status = self._attempt(url, endpoint, body, check)
            if reply is not None:
                return reply
            if attempt >= self.max_retries:
                raise ApiError(
                    f"{self.public_base}/{endpoint}: giving up after {attempt + 1} attempts: {failure}",
                    status=status,
                    endpoint=endpoint,
                )
            delay = self._backoff.delay(attempt, retry_after)
            self._log.warning(
                "api retry", endpoint=endpoint, status=status, attempt=attempt + 1, wait_s=round(delay, 3), reason=failure
            )
            self._sleep(delay)
            attempt += 1

    def _attempt(self, url: str, endpoint: str, body: dict[str, Any], check: ReplyCheck | None):
        """One HTTP exchange: ``(reply, None, None, status)``, or ``(None, reason, retry_after, status)`` when retryable."""
        httpx = self._httpx
        self.sent += 1
        try:
            response = self._http.post(url, json=body)
        except httpx.TimeoutException:
            return None, "timed out", None, None
        except httpx.TransportError as error:
            return None, f"connection failed ({type(error).__name__})", None, None
        status = response.status_code
        if status >= 500 or status in RETRYABLE_STATUS:
            return None, f"HTTP {status}", retry_after_seconds(response.headers.get("retry-after")), status
        if status >= 400:
            raise ApiError(
                f"{self.public_base}/{endpoint} answered HTTP {status}: {self._scrub(_server_message(response.text))}",
                status=status,
                endpoint=endpoint,
            )
        try:
            reply = json.loads(response.text)
            if not isinstance(reply, dict):
                raise MalformedReply("the reply is not a JSON object")
            if check is not None:
                check(reply)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None, "malformed JSON reply", None, status
        except MalformedReply as error:
            return None, f"malformed reply: {error}", None, status
        return reply, None, None, status


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
