"""On-disk cache of successful API replies, so a re-run costs nothing.

SQLite, JSON text only. The key is the sha256 of the canonical JSON of
``(api_base, model, endpoint, request body)``; the API key is never part of it
and never stored.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from culturebias.domain.fingerprint import fingerprint


def request_key(api_base: str, endpoint: str, body: dict[str, Any]) -> str:
    return fingerprint({"api_base": api_base, "model": body.get("model"), "endpoint": endpoint, "body": body}, length=64)


class RequestCache:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, endpoint TEXT NOT NULL, reply TEXT NOT NULL)"
        )

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, endpoint: str, reply: dict[str, Any]) -> None:
        text = json.dumps(reply, ensure_ascii=False, sort_keys=True)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO replies (key, endpoint, reply) VALUES (?, ?, ?)", (key, endpoint, text))

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
