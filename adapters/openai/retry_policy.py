"""When the OpenAI-compatible client tries a request again, and how long it waits first.

429, 5xx and the statuses in ``RETRYABLE_STATUS`` are retried; ``OVERLOAD_STATUS`` (and a
timeout) also lower the number of requests in flight (``concurrency.py``). The wait is the
server's ``Retry-After`` when it sends one (``retry_after_seconds``), else ``Backoff``'s
exponential backoff with jitter. ``Failure`` is one attempt that is worth another try.
"""

from __future__ import annotations

import email.utils
import random
import threading
from dataclasses import dataclass
from datetime import datetime, timezone

from culturebias.adapters.openai.concurrency import Outcome

RETRYABLE_STATUS = {408, 409, 425, 429}
OVERLOAD_STATUS = {429, 503, 504}  # the server says it is busy: fewer requests in flight, not only a retry


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
class Failure:
    """One attempt that failed in a way worth another try."""

    reason: str
    retry_after: float | None = None
    status: int | None = None
    invalid: bool = False  # a 200 whose reply failed the check (else a transport failure)
    overload: bool = False  # a timeout, 429 or 503/504: the server did not keep up
    unreachable: bool = False  # the connection broke (a refused one raises at once instead)

    @property
    def outcome(self) -> Outcome:
        return "overload" if self.overload else "other"


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
