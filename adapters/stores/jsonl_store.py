"""A file store: a folder of JSON Lines files, readable with any tool.

Layout under ``path``: ``runs.jsonl`` (one manifest or status event per line)
and ``results/<run_id>/<stage>.jsonl`` (one line per saved batch:
``{"progress": {"done": .., "total": ..} | null, "results": [{"key": .., "payload": ..}, ..]}``;
``jq -c '.results[]'`` lists the results one per line).

A batch is one line because a line is the unit a kill cannot split: a write killed
part-way leaves a line with no trailing newline, which readers ignore and the next
append truncates. A batch written as many lines could be cut between two complete
lines, and its first half would read as committed. Files of the older layout (one
``{"key": .., "payload": ..}`` line per result) are still read.

Run leases live in ``leases.json`` (run id → lease), rewritten whole through a
renamed temporary file while ``leases.lock`` is held (``flock``), so processes
sharing the folder take a run's lease one at a time.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, TypeVar

from culturebias.domain.runs import RunLease, RunManifest, StageProgress, utc_now

T = TypeVar("T")
LEASES = "leases.json"
LEASES_LOCK = "leases.lock"


class JsonlResultStore:
    def __init__(self, path: str | Path):
        self.root = Path(path)
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    # -- low level ----------------------------------------------------------
    def _append(self, path: Path, records: list[Mapping[str, Any]]) -> None:  # Any: JSON payloads (the ResultStore port's)
        if not records:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        blob = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
        with self._lock:
            _drop_torn_tail(path)
            with open(path, "ab") as handle:
                handle.write(blob)
                handle.flush()
                os.fsync(handle.fileno())

    @staticmethod
    def _read(path: Path) -> Iterator[dict[str, Any]]:  # Any: JSON payloads (the ResultStore port's)
        if not path.exists():
            return
        with open(path, "rb") as handle:
            for raw in handle:
                if not raw.endswith(b"\n"):
                    return  # torn final line of a killed write
                try:
                    yield json.loads(raw)
                except json.JSONDecodeError:
                    continue

    def _runs(self) -> dict[str, dict[str, Any]]:  # Any: JSON payloads (the ResultStore port's)
        runs: dict[str, dict[str, Any]] = {}  # Any: JSON payloads (the ResultStore port's)
        for event in self._read(self.root / "runs.jsonl"):
            run_id = event["run_id"]
            if event["event"] == "created":
                runs[run_id] = {"manifest": event["manifest"], "status": "running", "finished_at": None}
            elif run_id in runs:
                runs[run_id].update({k: v for k, v in event.items() if k in {"status", "finished_at", "summary", "failure"}})
        return runs

    # -- port ----------------------------------------------------------------
    def create_run(self, manifest: RunManifest) -> None:
        self._append(self.root / "runs.jsonl", [{"event": "created", "run_id": manifest.run_id, "manifest": manifest.model_dump()}])

    def _manifest(self, entry: dict[str, Any], leases: dict[str, RunLease]) -> RunManifest:  # Any: JSON payloads (the ResultStore port's)
        manifest = RunManifest.model_validate(entry["manifest"])
        return manifest.model_copy(
            update={
                "status": entry["status"],
                "finished_at": entry.get("finished_at"),
                "failure": entry.get("failure"),
                "progress": self._progress(manifest.run_id),
                "lease": leases.get(manifest.run_id),
            }
        )

    def _progress(self, run_id: str) -> dict[str, StageProgress]:
        folder = self.root / "results" / run_id
        if not folder.is_dir():
            return {}
        found: dict[str, StageProgress] = {}
        for path in sorted(folder.glob("*.jsonl")):
            last = _last_progress(path)
            if last is not None:
                found[path.name[: -len(".jsonl")]] = StageProgress.model_validate(last)
        return found

    def get_run(self, run_id: str) -> RunManifest | None:
        entry = self._runs().get(run_id)
        return self._manifest(entry, self._read_leases()) if entry else None

    def find_runs(self, benchmark: str | None = None) -> list[RunManifest]:
        leases = self._read_leases()
        manifests = [self._manifest(e, leases) for e in self._runs().values()]
        return sorted(
            (m for m in manifests if benchmark is None or m.benchmark == benchmark), key=lambda m: m.created_at
        )

    def _results_path(self, run_id: str, stage: str) -> Path:
        return self.root / "results" / run_id / f"{stage}.jsonl"

    def load_results(self, run_id: str, stage: str) -> dict[str, dict[str, Any]]:  # Any: JSON payloads (the ResultStore port's)
        results: dict[str, dict[str, Any]] = {}  # Any: JSON payloads (the ResultStore port's)
        for line in self._read(self._results_path(run_id, stage)):
            for record in line.get("results", ()):
                results[record["key"]] = record["payload"]
            if "key" in line:  # the older one-result-per-line layout
                results[line["key"]] = line["payload"]
        return results

    def save_results(
        self, run_id: str, stage: str, results: Mapping[str, Mapping[str, Any]], progress: StageProgress | None = None  # Any: JSON payloads (the ResultStore port's)
    ) -> None:
        if not results and progress is None:
            return
        batch = {
            "progress": progress.model_dump() if progress is not None else None,
            "results": [{"key": k, "payload": dict(v)} for k, v in results.items()],
        }
        self._append(self._results_path(run_id, stage), [batch])

    def finish_run(self, run_id: str, summary: Mapping[str, Any]) -> None:  # Any: JSON payloads (the ResultStore port's)
        self._append(
            self.root / "runs.jsonl",
            [{"event": "finished", "run_id": run_id, "status": "finished", "finished_at": utc_now(), "summary": dict(summary), "failure": None}],
        )

    def mark_failed(self, run_id: str, reason: str) -> None:
        self._append(self.root / "runs.jsonl", [{"event": "failed", "run_id": run_id, "status": "failed", "failure": reason}])

    def mark_interrupted(self, run_id: str, reason: str) -> None:
        self._append(
            self.root / "runs.jsonl", [{"event": "interrupted", "run_id": run_id, "status": "interrupted", "failure": reason}]
        )

    def mark_running(self, run_id: str) -> None:
        self._append(self.root / "runs.jsonl", [{"event": "running", "run_id": run_id, "status": "running", "failure": None}])

    def load_summary(self, run_id: str) -> dict[str, Any] | None:  # Any: JSON payloads (the ResultStore port's)
        entry = self._runs().get(run_id)
        return entry.get("summary") if entry else None

    # -- leases ---------------------------------------------------------------
    def _read_leases(self) -> dict[str, RunLease]:
        try:
            raw = json.loads((self.root / LEASES).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {run_id: RunLease.model_validate(lease) for run_id, lease in raw.items()} if isinstance(raw, dict) else {}

    def _with_leases(self, change: Callable[[dict[str, RunLease]], tuple[bool, T]]) -> T:
        """``change(leases) -> (write, result)`` under the folder's lease lock; the file is rewritten when ``write``."""
        with self._lock, _flocked(self.root / LEASES_LOCK):
            leases = self._read_leases()
            write, result = change(leases)
            if write:
                path = self.root / LEASES
                tmp = path.with_name(f".{LEASES}.{uuid.uuid4().hex}.partial")
                blob = json.dumps({k: v.model_dump() for k, v in leases.items()}, ensure_ascii=False).encode("utf-8")
                with open(tmp, "wb") as handle:
                    handle.write(blob)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, path)
            return result

    def acquire_lease(self, run_id: str, lease: RunLease, stale_before: str, replacing: str | None = None) -> RunLease | None:
        def take(leases: dict[str, RunLease]) -> tuple[bool, RunLease | None]:
            held = leases.get(run_id)
            if held is not None and not held.gives_way(lease, stale_before, replacing):
                return False, held
            leases[run_id] = lease
            return True, None

        return self._with_leases(take)

    def renew_lease(self, run_id: str, token: str, heartbeat_at: str) -> bool:
        def renew(leases: dict[str, RunLease]) -> tuple[bool, bool]:
            held = leases.get(run_id)
            if held is None or held.token != token:
                return False, False
            leases[run_id] = held.model_copy(update={"heartbeat_at": heartbeat_at})
            return True, True

        return self._with_leases(renew)

    def release_lease(self, run_id: str, token: str) -> None:
        def release(leases: dict[str, RunLease]) -> tuple[bool, None]:
            if run_id in leases and leases[run_id].token == token:
                del leases[run_id]
                return True, None
            return False, None

        self._with_leases(release)

    def close(self) -> None:
        pass


@contextlib.contextmanager
def _flocked(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` (created if needed); only the thread lock where there is none."""
    try:
        import fcntl
    except ImportError:  # not POSIX: processes sharing the folder are not kept apart
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _last_progress(path: Path) -> dict[str, Any] | None:  # Any: JSON payloads (the ResultStore port's)
    """The newest progress of a stage file: normally in its last complete line, so lines are read from the end."""
    for raw in _complete_lines_from_end(path):
        try:
            record = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get("progress") is not None:
            return record["progress"]
    return None


def _complete_lines_from_end(path: Path, chunk: int = 65536) -> Iterator[bytes]:
    """Newline-terminated lines, last first, read in chunks from the end (a torn last line is skipped)."""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        position = handle.tell()
        pending = b""
        past_torn_tail = False
        while position > 0:
            start = max(0, position - chunk)
            handle.seek(start)
            pending = handle.read(position - start) + pending
            position = start
            if not past_torn_tail:
                last_newline = pending.rfind(b"\n")
                if last_newline == -1:
                    continue  # still inside the torn (or only) unterminated line
                pending = pending[:last_newline]
                past_torn_tail = True
            lines = pending.split(b"\n")
            pending = lines[0] if position > 0 else b""  # the first may continue in the previous chunk
            for raw in reversed(lines[1:] if position > 0 else lines):
                if raw:
                    yield raw


def _drop_torn_tail(path: Path) -> None:
    """Cut an incomplete last line (left by a killed writer) before appending."""
    if not path.exists():
        return
    with open(path, "rb+") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        if size == 0:
            return
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        # walk back to the previous newline
        position = size - 1
        chunk = 4096
        while position > 0:
            start = max(0, position - chunk)
            handle.seek(start)
            data = handle.read(position - start)
            newline = data.rfind(b"\n")
            if newline != -1:
                handle.truncate(start + newline + 1)
                return
            position = start
        handle.truncate(0)
