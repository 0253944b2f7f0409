"""An adaptive limit on requests in flight: additive increase, multiplicative decrease (AIMD), as TCP does.

The limit starts low and is halved (never below 1) when a request meets an
overloaded server: a timeout, a 429 or a 503/504. It grows by one after a run of
successes at the current limit: the first ``max(limit, min_run)`` requests that
started under it all came back valid, and the client had the whole limit in
flight at least once (else the server was never tested at that limit). A
request of the run still hanging holds the run open, so a server that keeps
some requests waiting is never credited with keeping up.

One overload halves the limit once: requests that started before the last
decrease were sent under the old, higher limit, and their failures are the same
news arriving late. Other failures (a 500, an invalid reply, a refused
connection) say nothing about load; they only break the run of successes.

Worker threads share one ``AdaptiveLimit``: ``acquire`` blocks until a request
may start and returns its ``Slot``; ``release`` reports how it went. The logic
takes no time into account, so tests drive it with explicit events.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Literal

Outcome = Literal["ok", "overload", "other"]
MIN_RUN = 4  # successes needed to grow, even at limit 1: each probe of a higher limit may cost a timeout


class Abandoned(Exception):
    """The caller gave up (``stop`` was set) while a request waited for a slot."""


@dataclass(frozen=True)
class Slot:
    epoch: int  # the limit's generation when the request started
    counts: bool  # one of the run that decides growth (among the first requests started under this limit)


@dataclass(frozen=True)
class Change:
    old: int
    new: int
    reason: str  # the failure that lowered it, or the run of successes that raised it

    @property
    def direction(self) -> str:
        return "raised" if self.new > self.old else "lowered"


class AdaptiveLimit:
    """``adaptive=False`` keeps the limit at ``initial`` (what a fixed pool of ``initial`` workers would do)."""

    def __init__(
        self,
        initial: int,
        maximum: int,
        *,
        adaptive: bool = True,
        min_run: int = MIN_RUN,
        on_change: Callable[[Change], None] | None = None,
    ):
        self.maximum = max(1, maximum)
        self.adaptive = adaptive
        self._limit = min(max(1, initial), self.maximum)
        self._min_run = max(1, min_run)
        self._on_change = on_change
        self._cond = threading.Condition()
        self._in_flight = 0
        self._epoch = 0
        self._last_decrease = 0  # the epoch the last decrease began
        self._run_started = 0  # requests of the current run that started
        self._run_ok = 0  # ... and came back valid
        self._run_saturated = False  # the whole limit was in flight at some point of the run
        self.lowest = self._limit
        self.highest = self._limit
        self.changes: list[Change] = []

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def _run_length(self) -> int:
        return max(self._limit, self._min_run)

    # -- starting a request ---------------------------------------------------------------
    def try_acquire(self) -> Slot | None:
        """A slot when fewer than ``limit`` requests are in flight, else None (never blocks)."""
        with self._cond:
            return self._take()

    def acquire(self, stop: threading.Event | None = None) -> Slot:
        """Block until a request may start; ``Abandoned`` when ``stop`` is set first."""
        with self._cond:
            while True:
                if stop is not None and stop.is_set():
                    raise Abandoned()
                slot = self._take()
                if slot is not None:
                    return slot
                self._cond.wait(timeout=0.1 if stop is not None else None)

    def _take(self) -> Slot | None:
        if self._in_flight >= self._limit:
            return None
        self._in_flight += 1
        if self._in_flight == self._limit:
            self._run_saturated = True
        counts = self._run_started < self._run_length()
        if counts:
            self._run_started += 1
        return Slot(self._epoch, counts)

    # -- a request came back --------------------------------------------------------------
    def release(self, slot: Slot, outcome: Outcome, reason: str = "") -> None:
        with self._cond:
            self._in_flight -= 1
            if self.adaptive:
                self._learn(slot, outcome, reason)
            self._cond.notify_all()

    def _learn(self, slot: Slot, outcome: Outcome, reason: str) -> None:
        if outcome == "overload":
            if slot.epoch >= self._last_decrease:  # else sent under a limit already lowered for this
                self._set(max(1, self._limit // 2), reason or "the server is overloaded")
                self._last_decrease = self._epoch
            return
        if slot.epoch != self._epoch:
            return
        if outcome == "other":
            self._new_run()
            return
        if slot.counts:
            self._run_ok += 1
            if self._run_ok >= self._run_length():
                if self._limit < self.maximum and self._run_saturated:
                    self._set(self._limit + 1, f"{self._run_ok} requests in a row served at the limit")
                else:
                    self._new_run()

    def _new_run(self) -> None:
        self._epoch += 1
        self._run_started = 0
        self._run_ok = 0
        self._run_saturated = self._in_flight >= self._limit

    def _set(self, new: int, reason: str) -> None:
        change = Change(self._limit, new, reason)
        self._limit = new
        self._new_run()
        if change.new != change.old:
            self.lowest = min(self.lowest, new)
            self.highest = max(self.highest, new)
            self.changes.append(change)
            if self._on_change is not None:
                self._on_change(change)
