"""On-disk cache of valid API replies, so a re-run costs nothing.

SQLite, JSON text only. The key is the sha256 of the canonical JSON of
``(api_base, model, endpoint, request body)``; ``api_base`` is the public one
(no userinfo, no query), and the API key is never part of it and never stored.

Only replies that passed the endpoint's validation are put here, and a reply
read back is validated again before use (``ApiClient.post``): one that fails
(an older culturebias cached it, or the file was edited) is dropped and the
request asked again. ``model.cache``: ``use`` reads and writes, ``refresh``
writes only (every request is asked again and its entry replaced), ``off``
neither.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Literal

from culturebias.domain.errors import CultureBiasError
from culturebias.domain.fingerprint import fingerprint

CacheMode = Literal["use", "refresh", "off"]


class RequestCacheError(CultureBiasError):
    """The request cache file cannot be opened, read or written."""

    def __init__(self, path: Path, error: Exception):
        self.path = path
        super().__init__(
            f"the openai request cache {path} cannot be used ({type(error).__name__}: {error}); "
            "delete the file, or run with model.cache=off"
        )


def request_key(api_base: str, endpoint: str, body: dict[str, Any]) -> str:  # Any: JSON request bodies and replies of the OpenAI-compatible API
    return fingerprint({"api_base": api_base, "model": body.get("model"), "endpoint": endpoint, "body": body}, length=64)


class RequestCache:
    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, endpoint TEXT NOT NULL, reply TEXT NOT NULL)"
            )
        except (OSError, sqlite3.Error) as error:
            raise RequestCacheError(path, error) from None

    def _execute(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:  # Any: sqlite3 parameters and rows
        try:
            with self._lock:
                return self._db.execute(sql, parameters).fetchall()
        except sqlite3.Error as error:
            raise RequestCacheError(self.path, error) from None

    def get(self, key: str) -> Any:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        """The cached reply (parsed JSON), or None. ValueError when the stored text is not JSON."""
        rows = self._execute("SELECT reply FROM replies WHERE key = ?", (key,))
        if not rows:
            return None
        try:
            return json.loads(rows[0][0])
        except (TypeError, ValueError):
            raise ValueError("the cached reply is not JSON") from None

    def put(self, key: str, endpoint: str, reply: dict[str, Any]) -> None:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        text = json.dumps(reply, ensure_ascii=False, sort_keys=True)
        self._execute("INSERT OR REPLACE INTO replies (key, endpoint, reply) VALUES (?, ?, ?)", (key, endpoint, text))

    def drop(self, key: str) -> None:
        self._execute("DELETE FROM replies WHERE key = ?", (key,))

    def __len__(self) -> int:
        return int(self._execute("SELECT COUNT(*) FROM replies")[0][0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
