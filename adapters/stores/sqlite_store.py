"""The default result store: one embedded SQLite file, created on first use.

Each ``save_results`` batch is one transaction; WAL journaling keeps a killed
process from leaving a half-written batch behind.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Mapping

from culturebias.domain.runs import RunManifest, utc_now

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    benchmark TEXT NOT NULL,
    manifest TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    failure TEXT,
    summary TEXT
);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    stage TEXT NOT NULL,
    key TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (run_id, stage, key)
);
"""


class SQLiteResultStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def _transaction(self):
        return _Transaction(self._db, self._lock)

    def create_run(self, manifest: RunManifest) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT INTO runs (run_id, benchmark, manifest, status, created_at) VALUES (?, ?, ?, ?, ?)",
                (manifest.run_id, manifest.benchmark, manifest.model_dump_json(), manifest.status, manifest.created_at),
            )

    def _manifest(self, row: tuple) -> RunManifest:
        manifest = RunManifest.model_validate_json(row[0])
        return manifest.model_copy(update={"status": row[1], "finished_at": row[2], "failure": row[3]})

    def get_run(self, run_id: str) -> RunManifest | None:
        row = self._db.execute("SELECT manifest, status, finished_at, failure FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return self._manifest(row) if row else None

    def find_runs(self, benchmark: str | None = None) -> list[RunManifest]:
        if benchmark is None:
            rows = self._db.execute("SELECT manifest, status, finished_at, failure FROM runs ORDER BY created_at").fetchall()
        else:
            rows = self._db.execute(
                "SELECT manifest, status, finished_at, failure FROM runs WHERE benchmark = ? ORDER BY created_at", (benchmark,)
            ).fetchall()
        return [self._manifest(r) for r in rows]

    def load_results(self, run_id: str, stage: str) -> dict[str, dict[str, Any]]:
        rows = self._db.execute("SELECT key, payload FROM results WHERE run_id = ? AND stage = ?", (run_id, stage))
        return {key: json.loads(payload) for key, payload in rows}

    def save_results(self, run_id: str, stage: str, results: Mapping[str, Mapping[str, Any]]) -> None:
        rows = [(run_id, stage, key, json.dumps(payload, ensure_ascii=False)) for key, payload in results.items()]
        with self._transaction() as db:
            db.executemany("INSERT OR REPLACE INTO results (run_id, stage, key, payload) VALUES (?, ?, ?, ?)", rows)

    def finish_run(self, run_id: str, summary: Mapping[str, Any]) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET status = 'finished', finished_at = ?, summary = ?, failure = NULL WHERE run_id = ?",
                (utc_now(), json.dumps(summary, ensure_ascii=False), run_id),
            )

    def mark_failed(self, run_id: str, reason: str) -> None:
        with self._transaction() as db:
            db.execute("UPDATE runs SET status = 'failed', failure = ? WHERE run_id = ?", (reason, run_id))

    def load_summary(self, run_id: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT summary FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return json.loads(row[0]) if row and row[0] else None

    def close(self) -> None:
        self._db.close()


class _Transaction:
    def __init__(self, db: sqlite3.Connection, lock: threading.Lock):
        self._db = db
        self._lock = lock

    def __enter__(self) -> sqlite3.Connection:
        self._lock.acquire()
        self._db.execute("BEGIN IMMEDIATE")
        return self._db

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self._db.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self._lock.release()
