"""The default result store: one embedded SQLite file, created on first use.

Each ``save_results`` batch is one transaction, together with the stage's
progress; WAL journaling keeps a killed process from leaving a half-written
batch behind. A run's lease (``run_leases``) is taken in a write transaction
(``BEGIN IMMEDIATE``), so two processes sharing the file cannot both take it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Mapping

from culturebias.adapters.stores.common import RUN_COLUMNS as _RUN_COLUMNS, RUNS_TABLE_COLUMNS, StatusMarks
from culturebias.domain.errors import DataError
from culturebias.domain.runs import RunLease, RunManifest, StageProgress, utc_now

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS runs ({RUNS_TABLE_COLUMNS});
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    stage TEXT NOT NULL,
    key TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (run_id, stage, key)
);
CREATE TABLE IF NOT EXISTS stage_progress (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    stage TEXT NOT NULL,
    done INTEGER NOT NULL,
    total INTEGER NOT NULL,
    PRIMARY KEY (run_id, stage)
);
"""

# Apart: a store written by an older version and opened read-only (a teammate's) has no such table and
# cannot get one; it is read as holding no leases.
_LEASES = "CREATE TABLE IF NOT EXISTS run_leases (run_id TEXT PRIMARY KEY, lease TEXT NOT NULL)"


class SQLiteResultStore(StatusMarks):
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # SQLite creates its files 0644 whatever the umask; created first with 0666, the database
        # (and its -wal/-shm files, which copy its mode) follow the user's umask, e.g. group-writable.
        if not self.path.exists():  # an existing store, perhaps a teammate's read-only one, is opened as it is
            try:
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            except FileExistsError:
                pass  # another process created it first
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as error:
            self._db.close()
            raise DataError(f"not a culturebias SQLite result store ({error})", file=str(self.path)) from None
        try:
            self._db.execute(_LEASES)
        except sqlite3.OperationalError:  # read-only: nothing is written to it, so nothing is leased
            pass

    def _transaction(self):
        return _Transaction(self._db, self._lock)

    def create_run(self, manifest: RunManifest) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT INTO runs (run_id, benchmark, manifest, status, created_at) VALUES (?, ?, ?, ?, ?)",
                (manifest.run_id, manifest.benchmark, manifest.model_dump_json(), manifest.status, manifest.created_at),
            )

    def _progress(self, run_ids: list[str]) -> dict[str, dict[str, StageProgress]]:
        found: dict[str, dict[str, StageProgress]] = {}
        if not run_ids:
            return found
        if len(run_ids) <= 500:  # within any SQLite's limit on bound parameters
            marks = ",".join("?" * len(run_ids))
            rows = self._db.execute(f"SELECT run_id, stage, done, total FROM stage_progress WHERE run_id IN ({marks})", run_ids)
        else:
            rows = self._db.execute("SELECT run_id, stage, done, total FROM stage_progress")
        wanted = set(run_ids)
        for run_id, stage, done, total in rows:
            if run_id in wanted:
                found.setdefault(run_id, {})[stage] = StageProgress(done=done, total=total)
        return found

    def _leases(self, run_ids: list[str]) -> dict[str, RunLease]:
        if not run_ids:
            return {}
        try:
            if len(run_ids) <= 500:
                marks = ",".join("?" * len(run_ids))
                rows = self._db.execute(f"SELECT run_id, lease FROM run_leases WHERE run_id IN ({marks})", run_ids).fetchall()
            else:
                rows = self._db.execute("SELECT run_id, lease FROM run_leases").fetchall()
        except sqlite3.OperationalError:  # an older store opened read-only has no lease table
            return {}
        wanted = set(run_ids)
        return {run_id: RunLease.model_validate_json(lease) for run_id, lease in rows if run_id in wanted}

    def _manifests(self, rows: list[tuple]) -> list[RunManifest]:
        progress = self._progress([row[0] for row in rows])
        leases = self._leases([row[0] for row in rows])
        return [
            RunManifest.model_validate_json(manifest).model_copy(
                update={
                    "status": status,
                    "finished_at": finished_at,
                    "failure": failure,
                    "progress": progress.get(run_id, {}),
                    "lease": leases.get(run_id),
                }
            )
            for run_id, manifest, status, finished_at, failure in rows
        ]

    def get_run(self, run_id: str) -> RunManifest | None:
        row = self._db.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return self._manifests([row])[0] if row else None

    def find_runs(self, benchmark: str | None = None) -> list[RunManifest]:
        if benchmark is None:
            rows = self._db.execute(f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY created_at").fetchall()
        else:
            rows = self._db.execute(
                f"SELECT {_RUN_COLUMNS} FROM runs WHERE benchmark = ? ORDER BY created_at", (benchmark,)
            ).fetchall()
        return self._manifests(rows)

    def load_results(self, run_id: str, stage: str) -> dict[str, dict[str, Any]]:  # Any: JSON payloads (the ResultStore port's)
        rows = self._db.execute("SELECT key, payload FROM results WHERE run_id = ? AND stage = ?", (run_id, stage))
        return {key: json.loads(payload) for key, payload in rows}

    def save_results(
        self, run_id: str, stage: str, results: Mapping[str, Mapping[str, Any]], progress: StageProgress | None = None  # Any: JSON payloads (the ResultStore port's)
    ) -> None:
        rows = [(run_id, stage, key, json.dumps(payload, ensure_ascii=False)) for key, payload in results.items()]
        with self._transaction() as db:
            db.executemany("INSERT OR REPLACE INTO results (run_id, stage, key, payload) VALUES (?, ?, ?, ?)", rows)
            if progress is not None:
                db.execute(
                    "INSERT OR REPLACE INTO stage_progress (run_id, stage, done, total) VALUES (?, ?, ?, ?)",
                    (run_id, stage, progress.done, progress.total),
                )

    def finish_run(self, run_id: str, summary: Mapping[str, Any]) -> None:  # Any: JSON payloads (the ResultStore port's)
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET status = 'finished', finished_at = ?, summary = ?, failure = NULL WHERE run_id = ?",
                (utc_now(), json.dumps(summary, ensure_ascii=False), run_id),
            )

    def _set_status(self, run_id: str, status: str, failure: str | None) -> None:
        with self._transaction() as db:
            db.execute("UPDATE runs SET status = ?, failure = ? WHERE run_id = ?", (status, failure, run_id))

    def load_summary(self, run_id: str) -> dict[str, Any] | None:  # Any: JSON payloads (the ResultStore port's)
        row = self._db.execute("SELECT summary FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return json.loads(row[0]) if row and row[0] else None

    def acquire_lease(self, run_id: str, lease: RunLease, stale_before: str, replacing: str | None = None) -> RunLease | None:
        with self._transaction() as db:
            row = db.execute("SELECT lease FROM run_leases WHERE run_id = ?", (run_id,)).fetchone()
            held = RunLease.model_validate_json(row[0]) if row else None
            if held is not None and not held.gives_way(lease, stale_before, replacing):
                return held
            db.execute("INSERT OR REPLACE INTO run_leases (run_id, lease) VALUES (?, ?)", (run_id, lease.model_dump_json()))
            return None

    def renew_lease(self, run_id: str, token: str, heartbeat_at: str) -> bool:
        with self._transaction() as db:
            row = db.execute("SELECT lease FROM run_leases WHERE run_id = ?", (run_id,)).fetchone()
            held = RunLease.model_validate_json(row[0]) if row else None
            if held is None or held.token != token:
                return False
            renewed = held.model_copy(update={"heartbeat_at": heartbeat_at})
            db.execute("UPDATE run_leases SET lease = ? WHERE run_id = ?", (renewed.model_dump_json(), run_id))
            return True

    def release_lease(self, run_id: str, token: str) -> None:
        with self._transaction() as db:
            row = db.execute("SELECT lease FROM run_leases WHERE run_id = ?", (run_id,)).fetchone()
            if row and RunLease.model_validate_json(row[0]).token == token:
                db.execute("DELETE FROM run_leases WHERE run_id = ?", (run_id,))

    def close(self) -> None:
        self._db.close()


class _Transaction:
    def __init__(self, db: sqlite3.Connection, lock: threading.Lock):
        self._db = db
        self._lock = lock

    def __enter__(self) -> sqlite3.Connection:
        self._lock.acquire()
        try:
            if self._db.in_transaction:  # left open by a signal that struck between BEGIN and COMMIT
                self._db.execute("ROLLBACK")
            self._db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._lock.release()
            raise
        return self._db

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self._db.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self._lock.release()
