"""HTTP client for OpenAI-compatible servers: adaptive concurrency, scaled timeouts, bounded retries, validated reply cache.

Concurrency: at most ``AdaptiveLimit.limit`` requests are in flight. It starts
at ``initial_concurrency``, is halved when a request times out or meets a 429 or
503/504, and grows by one after a run of successes, up to ``max_concurrency``
(``adapters/openai/concurrency.py``). Each attempt holds a slot only while its
HTTP exchange lasts, not while it waits to retry. Timeouts scale with the
prompt: ``timeout_s`` plus ``timeout_s_per_1k_chars`` per 1000 characters of
the prompt (or of every chat message), since a server's prefill time grows
with the prompt and queued requests wait for the whole of it.

Retries: 429, 5xx, timeouts, a connection the server dropped mid-exchange,
unreadable bodies and replies that fail the endpoint's validation (``check``: no
text, log-probabilities missing, cut short or not finite) are retried at most
``max_retries`` times, waiting ``Retry-After`` when the server sends it and
otherwise an exponential backoff with jitter (``retry_policy.py``). A connection that cannot be made at
all (refused: nothing listens on the port; a host name that does not resolve) is
not retried: it raises ``ServerUnavailableError`` at once, so a run against a
server that is not there stops within seconds with one error. Other 4xx replies
fail at once with the server's message.
When the retries run out, the last failure decides the error: an invalid reply
raises ``InvalidReplyError`` (the generator and the scorer count such a lost
reply; the capability probe raises it), anything else ``ServerUnavailableError``.
The errors and the reply check live in ``api_errors.py`` and are re-exported here.

Only a reply that passed ``check`` is cached, and a cached reply is checked
again when read: one that fails is dropped and the request asked again; every
error that follows says so. The API key is sent in the Authorization header
only; it and every other credential (URL userinfo, key-like query parameters)
are kept out of error messages and logs (``domain/redaction.py``).
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any, Callable, Sequence
from urllib.parse import unquote, urlsplit, urlunsplit

from pydantic import SecretStr

# The errors are re-exported here: the adapters and errors.py import them from the client that raises them.
from culturebias.adapters.openai.api_errors import (
    ApiError,
    InvalidReply,
    InvalidReplyError,
    MalformedReply,
    ReplyCheck,
    ServerUnavailableError,
    server_message,
    validate_reply,
)
from culturebias.adapters.openai.concurrency import Abandoned, AdaptiveLimit, Change, Outcome
from culturebias.adapters.openai.request_cache import CacheMode, RequestCache, request_key
from culturebias.adapters.openai.retry_policy import OVERLOAD_STATUS, RETRYABLE_STATUS, Backoff, Failure, retry_after_seconds
from culturebias.domain.redaction import redact_text, url_secrets
from culturebias.logs import get_logger

__all__ = [
    "ApiClient",
    "ApiError",
    "InvalidReply",
    "InvalidReplyError",
    "MalformedReply",
    "ReplyCheck",
    "ServerUnavailableError",
    "public_base",
]


def public_base(api_base: str) -> str:
    """``api_base`` without user:password and query, for logs, identities and cache keys."""
    parts = urlsplit(api_base)
    host = parts.hostname or ""
    if ":" in host:  # IPv6
        host = f"[{host}]"
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


class ApiClient:
    def __init__(
        self,
        api_base: str,
        *,
        api_key: SecretStr | None = None,
        timeout_s: float = 60.0,
        timeout_s_per_1k_chars: float = 0.0,
        max_retries: int = 5,
        max_concurrency: int = 8,
        initial_concurrency: int | None = None,
        adaptive_concurrency: bool = True,
        cache: RequestCache | None = None,
        cache_mode: CacheMode = "use",
        backoff: Backoff | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: Any = None,  # Any: an httpx transport (tests pass a mock one)
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
        self.initial_concurrency = min(self.max_concurrency, max(1, initial_concurrency or self.max_concurrency))
        # The limit in effect now (``concurrency.limit``) moves during a run; max_concurrency is the setting.
        self.concurrency = AdaptiveLimit(
            self.initial_concurrency, self.max_concurrency, adaptive=adaptive_concurrency, on_change=self._changed
        )
        self.timeout_s = timeout_s
        self.timeout_s_per_1k_chars = max(0.0, timeout_s_per_1k_chars)
        self.cache = cache if cache_mode != "off" else None
        self.cache_mode = cache_mode
        self._backoff = backoff or Backoff()
        self._sleep = sleep
        self._log = get_logger("culturebias.openai")
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

    def _changed(self, change: Change) -> None:
        log = self._log.warning if change.direction == "lowered" else self._log.info
        log(
            f"concurrency {change.direction}",
            server=self.public_base,
            limit=change.new,
            was=change.old,
            max_concurrency=self.max_concurrency,
            reason=self._scrub(change.reason),
        )

    def timeout_for(self, body: dict[str, Any]) -> float:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        """Seconds this request may take: ``timeout_s`` plus ``timeout_s_per_1k_chars`` per 1000 prompt characters."""
        return self.timeout_s + _prompt_chars(body) * self.timeout_s_per_1k_chars / 1000

    def _scrub(self, text: str) -> str:
        return redact_text(text, [s.get_secret_value() for s in self._secrets])

    def url(self, endpoint: str) -> str:
        url = f"{self.api_base}/{endpoint.lstrip('/')}"
        query = self._query.get_secret_value()
        return f"{url}?{query}" if query else url

    def post(
        self,
        endpoint: str,
        body: dict[str, Any],  # Any: JSON request bodies and replies of the OpenAI-compatible API
        check: ReplyCheck | None = None,
        use_cache: bool = True,
        *,
        label: str = "",
        stop: threading.Event | None = None,
    ) -> dict[str, Any]:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        """POST ``body`` as JSON; the validated reply, from the cache when it holds a valid one.

        ``label`` names the request in errors (e.g. "request 3 of 40"); ``stop`` abandons it between attempts.
        """
        cache = self.cache if use_cache else None
        key = request_key(self.public_base, endpoint, body)
        dropped: str | None = None
        if cache is not None and self.cache_mode == "use":
            cached, dropped = self._read_cache(cache, key, endpoint, body, check)
            if cached is not None:
                return cached
        reply = self._post_with_retries(endpoint, body, check, dropped, label, stop)
        if cache is not None:
            cache.put(key, endpoint, reply)
        return reply

    def _read_cache(
        self, cache: RequestCache, key: str, endpoint: str, body: dict[str, Any], check: ReplyCheck | None  # Any: JSON request bodies and replies of the OpenAI-compatible API
    ) -> tuple[dict[str, Any] | None, str | None]:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        """``(valid cached reply, None)``, ``(None, None)`` when there is none, ``(None, why)`` when it was dropped."""
        try:
            cached = cache.get(key)
            if cached is None:
                return None, None
            validate_reply(body, cached, check)
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
        bodies: Sequence[dict[str, Any]],  # Any: JSON request bodies and replies of the OpenAI-compatible API
        check: ReplyCheck | None = None,
        on_done: Callable[[int], None] | None = None,
        on_invalid: Callable[[int, InvalidReplyError], None] | None = None,
        on_reply: Callable[[int, dict[str, Any]], None] | None = None,  # Any: JSON request bodies and replies of the OpenAI-compatible API
    ) -> list[dict[str, Any] | None]:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        """Replies to every body, in order, at most ``concurrency.limit`` in flight.

        ``on_reply(index, reply)`` is called with each valid reply as it arrives,
        one call at a time on the thread that called ``post_all`` (so it may write
        to a store that belongs to that thread), also for replies that arrive
        after another request failed: a caller that stores them keeps what it got.
        With ``on_invalid``, a request whose every attempt got an invalid reply
        is handed to it (its entry is None) instead of failing the batch. The
        first request that fails for good (or an ``on_reply`` that raises) stops
        the others at their next attempt and is raised once the requests in
        flight are back; finished replies stay cached, so a re-run resumes there.
        """
        if not bodies:
            return []
        results: list[dict[str, Any] | None] = [None] * len(bodies)  # Any: JSON request bodies and replies of the OpenAI-compatible API
        stop = threading.Event()

        def one(index: int) -> int:
            label = f"request {index + 1} of {len(bodies)}"
            try:
                results[index] = self.post(endpoint, bodies[index], check, label=label, stop=stop)
            except InvalidReplyError as error:
                if on_invalid is None:
                    stop.set()
                    raise
                on_invalid(index, error)
            except ServerUnavailableError:
                stop.set()  # at once, from this thread: a request waiting for a slot must not try a dead server too
                raise
            if on_done is not None:
                on_done(1)
            return index

        failure: BaseException | None = None
        workers = min(self.max_concurrency, len(bodies))
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="openai")
        interrupted = True  # until the loop ends: Ctrl-C or SIGTERM does not wait on a request a stuck server holds
        try:
            futures = {pool.submit(one, i): i for i in range(len(bodies))}
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=futures.__getitem__):
                    error = None if future.cancelled() else future.exception()
                    if error is None and not future.cancelled():
                        reply = results[futures[future]]
                        if on_reply is not None and reply is not None:
                            try:
                                on_reply(futures[future], reply)
                            except Exception as raised:  # the caller's store failed: stop asking
                                error = raised
                    if error is not None and not isinstance(error, Abandoned) and failure is None:
                        failure = error
                        stop.set()
                        for other in pending:
                            other.cancel()
            interrupted = False
        finally:
            stop.set()  # an interruption too: the workers stop at their next attempt
            pool.shutdown(wait=not interrupted, cancel_futures=interrupted)
        if failure is not None:
            raise failure
        return results

    def _post_with_retries(
        self,
        endpoint: str,
        body: dict[str, Any],  # Any: JSON request bodies and replies of the OpenAI-compatible API
        check: ReplyCheck | None,
        dropped: str | None = None,
        label: str = "",
        stop: threading.Event | None = None,
    ) -> dict[str, Any]:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        url = self.url(endpoint)
        timeout = self.timeout_for(body)
        attempt = 0
        while True:
            slot = self.concurrency.acquire(stop)
            outcome: Outcome = "other"
            reason = ""
            try:
                reply, failure = self._attempt(url, endpoint, body, check, timeout)
                if reply is not None:
                    outcome = "ok"
                elif failure is not None:
                    outcome, reason = failure.outcome, failure.reason
            finally:
                self.concurrency.release(slot, outcome, reason)
            if reply is not None:
                return reply
            assert failure is not None
            if attempt >= self.max_retries:
                raise self._gave_up(endpoint, body, attempt + 1, failure, dropped, label, timeout)
            delay = self._backoff.delay(attempt, failure.retry_after)
            self._log.warning(
                "api retry",
                endpoint=endpoint,
                status=failure.status,
                attempt=attempt + 1,
                wait_s=round(delay, 3),
                reason=failure.reason,
            )
            if stop is not None and stop.is_set():
                raise Abandoned()
            self._sleep(delay)
            attempt += 1

    def _gave_up(
        self,
        endpoint: str,
        body: dict[str, Any],  # Any: JSON request bodies and replies of the OpenAI-compatible API
        attempts: int,
        failure: Failure,
        dropped: str | None,
        label: str,
        timeout: float,
    ) -> ApiError:
        which = ", ".join(part for part in (label, f"prompt {self._scrub(_shorten(body))}") if part)
        message = f"{self.public_base}/{endpoint}: giving up after {attempts} attempts: {failure.reason} ({which})"
        if dropped is not None and self.cache is not None:
            message += f" (a cached reply to this request was invalid too, {dropped}, and was dropped from {self.cache.path})"
        if failure.invalid:
            return InvalidReplyError(
                message, reason=failure.reason, attempts=attempts, endpoint=endpoint, cached_reply_dropped=dropped is not None
            )
        return ServerUnavailableError(f"{message}. {self._advice(failure, attempts, timeout)}", status=failure.status, endpoint=endpoint)

    def _advice(self, failure: Failure, attempts: int, timeout: float) -> str:
        """What to change, with the values in effect when the request gave up."""
        retries = f"model.max_retries (now {self.max_retries}) sets how often a request is tried again"
        if failure.unreachable:
            return f"Check that the server is running and reachable at {self.public_base}; {retries}."
        limit = self.concurrency
        adapting = (
            f"{limit.limit} request(s) in flight allowed now, lowest {limit.lowest}, adapting from "
            f"model.initial_concurrency={self.initial_concurrency}"
            if limit.adaptive
            else "a fixed limit, adaptation off"
        )
        return (
            f"The server at {self.public_base} did not keep up ({adapting}; this request was allowed {timeout:.3g} s = "
            f"model.timeout_s {self.timeout_s:g} + model.timeout_s_per_1k_chars {self.timeout_s_per_1k_chars:g} per 1000 "
            f"prompt characters). For a slow or one-slot server lower model.max_concurrency (now {self.max_concurrency}) "
            f"or model.initial_concurrency (now {self.initial_concurrency}), or raise model.timeout_s (now {self.timeout_s:g} s) "
            f"or model.max_retries (now {self.max_retries})"
        )

    def _attempt(
        self, url: str, endpoint: str, body: dict[str, Any], check: ReplyCheck | None, timeout: float  # Any: JSON request bodies and replies of the OpenAI-compatible API
    ) -> tuple[dict[str, Any] | None, Failure | None]:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        """One HTTP exchange: ``(reply, None)``, or ``(None, failure)`` when it is worth another try."""
        httpx = self._httpx
        self.sent += 1
        try:
            response = self._http.post(url, json=body, timeout=httpx.Timeout(timeout))
        except httpx.TimeoutException:
            return None, Failure(f"timed out after {timeout:.3g} s", overload=True)
        except httpx.ConnectError as error:  # refused or an unknown host: waiting will not make a server appear
            reason = self._scrub(str(error).strip() or type(error).__name__)
            raise ServerUnavailableError(
                f"{self.public_base}/{endpoint}: cannot connect ({reason}). Check that the server is running and "
                f"reachable at {self.public_base} (model.api_base); a connection that cannot be made is not retried",
                endpoint=endpoint,
            ) from None
        except httpx.TransportError as error:
            return None, Failure(f"connection failed ({type(error).__name__})", unreachable=True)
        status = response.status_code
        if status >= 500 or status in RETRYABLE_STATUS:
            retry_after = retry_after_seconds(response.headers.get("retry-after"))
            return None, Failure(f"HTTP {status}", retry_after, status, overload=status in OVERLOAD_STATUS)
        if status >= 400:
            raise ApiError(
                f"{self.public_base}/{endpoint} answered HTTP {status}: {self._scrub(server_message(response.text))}",
                status=status,
                endpoint=endpoint,
            )
        try:
            reply = json.loads(response.text)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None, Failure("malformed JSON reply", status=status)
        try:
            validate_reply(body, reply, check)
        except InvalidReply as error:
            return None, Failure(f"invalid reply: {self._scrub(str(error))}", status=status, invalid=True)
        return reply, None


def _prompt_chars(body: dict[str, Any]) -> int:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    """Characters the server has to read: the prompt, or every chat message's content."""
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return len(prompt)
    messages = body.get("messages")
    if isinstance(messages, list):
        return sum(len(m["content"]) for m in messages if isinstance(m, dict) and isinstance(m.get("content"), str))
    return 0


def _shorten(body: dict[str, Any], length: int = 40) -> str:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    """The request's prompt (a chat request's last message), cut short, for an error message."""
    text = body.get("prompt")
    if not isinstance(text, str):
        messages = body.get("messages")
        last = messages[-1] if isinstance(messages, list) and messages else None
        text = last.get("content") if isinstance(last, dict) else None
    if not isinstance(text, str):
        text = body.get("input") if isinstance(body.get("input"), str) else ""
    assert isinstance(text, str)
    return repr(text if len(text) <= length else text[: length - 1] + "…") + f" ({len(text)} characters)"
