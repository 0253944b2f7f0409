"""The lease a run holds in its store while one process writes it: taken, kept alive, given back.

A run is written by one process at a time. The process takes the run's lease
(``ResultStore.acquire_lease``: its token, host, pid and a heartbeat) when it
creates or resumes the run, renews the heartbeat from a background thread every
quarter of ``run.lease_seconds``, and releases the lease when the run ends,
however it ends. ``--resume`` never takes a run whose lease is live.

The stale-lease rule: a lease is stale when its heartbeat is older than
``run.lease_seconds``, or at once when its holder ran on this host and its
process is gone (a SIGKILL leaves no chance to release it). A stale lease is
taken over. Heartbeats are written with each writer's clock: machines sharing a
server store need clocks that agree to well within ``run.lease_seconds``.
"""

from __future__ import annotations

import os
import platform
import threading
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Callable

import structlog

from culturebias.domain.errors import ConfigError
from culturebias.domain.runs import RunInUseError, RunLease, RunManifest, utc_stamp
from culturebias.ports.results import ResultStore

log = structlog.get_logger("culturebias.run")

DEFAULT_LEASE_SECONDS = 60.0


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs on this host (one of another user's counts as running)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return True  # cannot tell: a live holder is the safe guess
    return True


@dataclass(frozen=True)
class LeaseRule:
    """When a lease is live; the clock, host and process check are what tests replace."""

    stale_seconds: float = DEFAULT_LEASE_SECONDS
    host: str = field(default_factory=platform.node)
    clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc)
    alive: Callable[[int], bool] = process_alive

    def stale_before(self) -> str:
        return utc_stamp(self.clock() - timedelta(seconds=self.stale_seconds))

    def holder_gone(self, lease: RunLease) -> bool:
        """Its process ran on this host and is gone."""
        return lease.host == self.host and not self.alive(lease.pid)

    def is_live(self, lease: RunLease | None) -> bool:
        return lease is not None and not self.holder_gone(lease) and lease.heartbeat_at >= self.stale_before()


def _leases(store: ResultStore) -> bool:
    """Whether the store keeps leases (a plugin's store written before them may not)."""
    return all(hasattr(store, name) for name in ("acquire_lease", "renew_lease", "release_lease"))


class RunLeaseKeeper:
    """This process's lease on one run: ``acquire()``, then ``release()`` when the run ends."""

    def __init__(self, store: ResultStore, run_id: str, rule: LeaseRule | None = None):
        self.store = store
        self.run_id = run_id
        self.rule = rule or LeaseRule()
        now = utc_stamp(self.rule.clock())
        self.lease = RunLease(token=uuid.uuid4().hex, host=self.rule.host, pid=os.getpid(), acquired_at=now, heartbeat_at=now)
        self.lost_to: RunLease | None = None  # who took the run over while this process held it
        self._held = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def acquire(self, heartbeat: bool = True) -> RunLease | None:
        """None when this process holds the run now (its heartbeat kept from a thread), else the live holder."""
        if not _leases(self.store):
            log.warning("this result store keeps no leases: runs sharing it are not kept apart", run_id=self.run_id)
            return None
        current = self.store.get_run(self.run_id)
        held = current.lease if current is not None else None
        replacing = held.token if held is not None and self.rule.holder_gone(held) else None
        holder = self.store.acquire_lease(self.run_id, self.lease, self.rule.stale_before(), replacing)
        if holder is not None:
            return holder
        if held is not None and held.token != self.lease.token:
            log.info("took over the lease of a run its writer left", run_id=self.run_id, previous=held.text())
        self._held = True
        if heartbeat:
            self._thread = threading.Thread(target=self._beat, name=f"lease {self.run_id}", daemon=True)
            self._thread.start()
        return None

    def _beat(self) -> None:
        interval = max(0.05, self.rule.stale_seconds / 4)
        while not self._stop.wait(interval):
            try:
                kept = self.store.renew_lease(self.run_id, self.lease.token, utc_stamp(self.rule.clock()))
            except Exception as error:  # a passing store outage: the next beat tries again
                log.warning("could not renew the run's lease", run_id=self.run_id, error=str(error))
                continue
            if not kept:
                current = self.store.get_run(self.run_id)
                self.lost_to = current.lease if current is not None and current.lease is not None else self.lease
                log.error(
                    "another process took this run over (this one's heartbeat lapsed); it will not be finished here",
                    run_id=self.run_id,
                    holder=self.lost_to.text(),
                )
                return

    @property
    def lost(self) -> bool:
        return self.lost_to is not None

    def check(self) -> None:
        """Raise when another process took the run over: this one must not finish or mark it."""
        if self.lost_to is not None:
            raise RunInUseError(
                self.run_id,
                self.lost_to,
                f"this process's heartbeat lapsed for longer than run.lease_seconds={self.rule.stale_seconds:g} and it "
                "lost the run; what it stored is kept",
            )

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._held and not self.lost:
            try:
                self.store.release_lease(self.run_id, self.lease.token)
            except Exception as error:  # the run's outcome is what matters; a stale lease is taken over later
                log.warning("could not release the run's lease", run_id=self.run_id, error=str(error))
        self._held = False


def mark_left_run_interrupted(store: ResultStore, run_id: str, rule: LeaseRule | None = None) -> RunManifest:
    """Mark a run that a process which is gone left ``running`` (or ``failed``) as ``interrupted``.

    Refused for a run another live process writes (``RunInUseError``) and for a finished one.
    """
    manifest = store.get_run(run_id)
    if manifest is None:
        raise ConfigError(f"no run {run_id} in the result store")
    if manifest.status == "finished":
        raise ConfigError(f"run {run_id} is finished; only an unfinished run can be marked interrupted")
    keeper = RunLeaseKeeper(store, run_id, rule)
    holder = keeper.acquire(heartbeat=False)  # taken first: no process can resume it while it is marked
    if holder is not None:
        raise RunInUseError(run_id, holder, "it is not left behind: wait for it to finish, or stop it first")
    try:
        left = f" by {manifest.lease.text()}" if manifest.lease is not None else ""
        store.mark_interrupted(run_id, f"marked interrupted: left {manifest.status}{left}; continue it with --resume")
    finally:
        keeper.release()
    updated = store.get_run(run_id)
    assert updated is not None
    return updated
