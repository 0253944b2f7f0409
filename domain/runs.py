"""A run: its identity, configuration, data fingerprint, lifecycle and how far it got."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from culturebias.domain.errors import CultureBiasError
from culturebias.domain.summary import SUMMARY_SCHEMA_VERSION  # noqa: F401  (re-exported)

# "interrupted": stopped by Ctrl-C or SIGTERM after flushing what was computed;
# "failed": stopped by an error. ``--resume`` continues either.
RunStatus = Literal["running", "finished", "failed", "interrupted"]


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def utc_stamp(moment: datetime | None = None) -> str:
    """A lease's time: UTC to the microsecond, in one format, so that stamps compare as strings."""
    return (moment or datetime.now(timezone.utc)).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class RunLease(BaseModel):
    """Who is writing a run: one process, found by ``token``, alive while it renews ``heartbeat_at``.

    A store keeps at most one lease per run; ``--resume`` never takes the run of a
    lease that is live (``application/run_lease.py`` says when one is stale).
    """

    model_config = ConfigDict(frozen=True)

    token: str
    host: str
    pid: int
    acquired_at: str
    heartbeat_at: str

    def text(self) -> str:
        return f"process {self.pid} on {self.host} (heartbeat {self.heartbeat_at})"

    def gives_way(self, to: "RunLease", stale_before: str, replacing: str | None = None) -> bool:
        """Whether this (held) lease may be replaced by ``to``: it is ``to``'s own, stale, or the one the caller found dead."""
        return self.token == to.token or self.heartbeat_at < stale_before or (replacing is not None and self.token == replacing)


class StageProgress(BaseModel):
    """Results stored for one stage, of the distinct requests the run has asked for in it so far."""

    done: int = Field(ge=0)
    total: int = Field(ge=0)


class RunManifest(BaseModel):
    run_id: str
    benchmark: str
    config: dict[str, Any]  # JSON boundary: the settings as JSON
    config_fingerprint: str
    data_fingerprint: str
    # The resume identity itself (``config_fingerprint`` is its hash): a refused resume names what differs.
    identity: dict[str, Any] = Field(default_factory=dict)  # JSON boundary
    model: dict[str, Any] = Field(default_factory=dict)  # JSON boundary
    status: RunStatus = "running"
    created_at: str = Field(default_factory=utc_now)
    finished_at: str | None = None
    failure: str | None = None  # why a failed or interrupted run stopped
    progress: dict[str, StageProgress] = Field(default_factory=dict)  # per stage, saved with its results
    lease: RunLease | None = None  # the process writing the run, as the store last heard from it

    def progress_text(self) -> str:
        """``loglikelihood 120/400, generation 0/10``; empty before anything was asked."""
        return ", ".join(f"{stage} {p.done}/{p.total}" for stage, p in sorted(self.progress.items()))


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by a signal (SIGTERM, SIGINT): what was computed is stored, the run is resumable."""

    def __init__(self, signum: int, name: str):
        self.signum = signum
        self.signal_name = name
        super().__init__(f"interrupted by {name}")


class OutputFolderBusyError(CultureBiasError):
    """Another live process is running in the same output folder."""

    def __init__(self, folder: str, holder: Mapping[str, object]):
        self.folder = folder
        self.holder = holder
        who = f"process {holder.get('pid', '?')} on {holder.get('host', '?')}"
        since = f" since {holder['started']}" if holder.get("started") else ""
        run = f" (run {holder['run_id']})" if holder.get("run_id") else ""
        super().__init__(
            f"output folder {folder} is in use by {who}{since}{run}; wait for it to finish, stop it, "
            "or choose another --out"
        )


class RunInUseError(CultureBiasError):
    """The run is being written by another live process (its lease in the store is not stale)."""

    def __init__(self, run_id: str, lease: RunLease, what: str):
        self.run_id = run_id
        self.lease = lease
        super().__init__(f"run {run_id} is being written by {lease.text()}; {what}")


def identity_differences(stored: Mapping[str, object], current: Mapping[str, object], prefix: str = "") -> list[str]:
    """``key: stored -> now`` for every dotted key whose value differs (a key on one side only included)."""
    lines: list[str] = []
    for key in sorted(set(stored) | set(current)):
        name = f"{prefix}{key}"
        old, new = stored.get(key, _ABSENT), current.get(key, _ABSENT)
        if isinstance(old, dict) and isinstance(new, dict):
            lines.extend(identity_differences(old, new, name + "."))
        elif old != new:
            lines.append(f"{name}: {_shown(old)} -> {_shown(new)}")
    return lines


_ABSENT = object()


def _shown(value: object) -> str:
    if value is _ABSENT:
        return "(not set)"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
