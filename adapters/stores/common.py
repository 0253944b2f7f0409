"""What the result stores share: the runs table's columns and the status marks built on ``_set_status``."""

from __future__ import annotations

# The runs table of the SQLite and PostgreSQL stores (PostgreSQL puts an identity column first).
RUNS_TABLE_COLUMNS = (
    "run_id TEXT PRIMARY KEY, benchmark TEXT NOT NULL, manifest TEXT NOT NULL, status TEXT NOT NULL, "
    "created_at TEXT NOT NULL, finished_at TEXT, failure TEXT, summary TEXT"
)

# The columns a RunManifest is read back from (``manifest_from_row`` of each store).
RUN_COLUMNS = "run_id, manifest, status, finished_at, failure"


class StatusMarks:
    """``mark_failed``, ``mark_interrupted`` and ``mark_running`` of a store that sets a run's status and failure at once."""

    def _set_status(self, run_id: str, status: str, failure: str | None) -> None:
        raise NotImplementedError

    def mark_failed(self, run_id: str, reason: str) -> None:
        self._set_status(run_id, "failed", reason)

    def mark_interrupted(self, run_id: str, reason: str) -> None:
        self._set_status(run_id, "interrupted", reason)

    def mark_running(self, run_id: str) -> None:
        self._set_status(run_id, "running", None)
