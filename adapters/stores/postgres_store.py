"""A PostgreSQL result store, for teams whose governance data lives in a database.

Several runs, from several processes or machines, may write one database at
once: every row is keyed by its run id. The tables ``culturebias_runs``,
``culturebias_results`` and ``culturebias_progress`` live in the connection's
schema (``options=-csearch_path=...`` in the DSN picks another) and are created on
first use under an advisory lock, so concurrent first runs do not race
(``culturebias_leases``, the process writing each run, is added to a database
made by an older version the same way); a role
that may not create tables works once they exist. Each ``save_results`` batch,
with its progress, is one transaction: a killed writer leaves whole batches only.
Payloads and summaries are kept as the same JSON text the SQLite store keeps, so
NaN, infinities and key order survive.

The password never has to appear in the settings: libpq reads ``PGPASSWORD`` and
``~/.pgpass`` itself, ``store.password_env`` names another environment variable
and ``store.password_file`` a file holding it. A password written into the DSN
works too, but is redacted from everything culturebias prints or stores.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, TypeVar

from culturebias.adapters.stores.common import RUN_COLUMNS as _RUN_COLUMNS, RUNS_TABLE_COLUMNS
from culturebias.domain.errors import ConfigError, CultureBiasError
from culturebias.domain.redaction import REDACTED, dsn_secrets, redact_dsn
from culturebias.domain.runs import RunLease, RunManifest, StageProgress, utc_now

T = TypeVar("T")

# Any constant both sides agree on: concurrent schema creators queue on it.
_SCHEMA_LOCK = 0x63756C7475726562  # "cultureb"

_SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS culturebias_runs (seq BIGINT GENERATED ALWAYS AS IDENTITY, {RUNS_TABLE_COLUMNS})",
    "CREATE INDEX IF NOT EXISTS culturebias_runs_by_benchmark ON culturebias_runs (benchmark, created_at, seq)",
    # No foreign key to culturebias_runs, as in the SQLite and JSONL stores: results may arrive for any run id.
    """CREATE TABLE IF NOT EXISTS culturebias_results (
        run_id TEXT NOT NULL,
        stage TEXT NOT NULL,
        key TEXT NOT NULL,
        payload TEXT NOT NULL,
        PRIMARY KEY (run_id, stage, key)
    )""",
    """CREATE TABLE IF NOT EXISTS culturebias_progress (
        run_id TEXT NOT NULL,
        stage TEXT NOT NULL,
        done BIGINT NOT NULL,
        total BIGINT NOT NULL,
        PRIMARY KEY (run_id, stage)
    )""",
    # The process writing a run (domain.runs.RunLease as JSON text), taken under a row lock; NULL once
    # released (an UPDATE: a role granted no DELETE can release it too).
    "CREATE TABLE IF NOT EXISTS culturebias_leases (run_id TEXT PRIMARY KEY, lease TEXT)",
)
_TABLES = ("culturebias_runs", "culturebias_results", "culturebias_progress", "culturebias_leases")


class PostgresConnectError(ConfigError):
    """The PostgreSQL store cannot connect (unreachable server, wrong password, no such database)."""


class PostgresStoreError(CultureBiasError):
    """A PostgreSQL store operation failed after the store was opened (e.g. the connection was lost)."""


class PostgresSettings(Protocol):
    """What the store reads of the ``store.*`` section (bootstrap's ``StoreSettings``)."""

    dsn: str | None
    password_env: str | None
    password_file: str | None


def _password(settings: PostgresSettings | None) -> str | None:
    """The password from ``store.password_file`` or the variable ``store.password_env``; None leaves it to libpq."""
    if settings is not None and settings.password_file:
        path = Path(settings.password_file).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"store.password_file {path}: cannot read it ({type(error).__name__})") from None
        password = text.splitlines()[0] if text.strip() else ""
        if not password:
            raise ConfigError(f"store.password_file {path} is empty")
        return password
    variable = settings.password_env if settings is not None else None
    if not variable:
        return None
    return os.environ.get(variable) or None


class PostgresResultStore:
    """``PostgresResultStore(path, settings)``: ``settings`` is the ``store.*`` section; ``path`` is unused."""

    def __init__(self, path: str | Path | None = None, settings: PostgresSettings | None = None):
        dsn = settings.dsn if settings is not None else None
        if not dsn:
            raise ConfigError(
                "store.backend=postgres needs store.dsn, e.g. store.dsn=postgresql://user@127.0.0.1:5432/db "
                "(the password from $PGPASSWORD, store.password_env or store.password_file)"
            )
        self._dsn = dsn
        self._password = _password(settings)
        self.where = redact_dsn(dsn)
        self._lock = threading.Lock()
        self._conn = self._connect()
        self._create_schema()

    # -- connection --------------------------------------------------------
    def _redact(self, text: str) -> str:
        text = text.replace(self._dsn, self.where)
        for secret in (self._password, *dsn_secrets(self._dsn)):
            if secret:
                text = text.replace(secret, REDACTED)
        return text

    def _connect(self):
        import psycopg

        extra = {"password": self._password} if self._password else {}
        try:
            return psycopg.connect(self._dsn, autocommit=True, application_name="culturebias", **extra)
        except psycopg.Error as error:
            hint = ""
            if "password" in str(error).lower():
                hint = " (give the password in $PGPASSWORD, the variable named by store.password_env, or store.password_file)"
            raise PostgresConnectError(
                f"store.dsn={self.where}: cannot connect: {self._redact(str(error).strip())}{hint}"
            ) from None
        except Exception as error:  # libpq rejects a malformed DSN before any connection
            raise PostgresConnectError(f"store.dsn={self.where}: {self._redact(str(error))}") from None

    def _run(self, what: str, operation: Callable[[Any], T]) -> T:  # Any: a psycopg connection
        """One operation, in its own transaction where it writes.

        A lost connection (a restarted server, a dropped idle link) is opened again and
        the operation retried once: every operation is idempotent, so a transaction that
        committed just before the link broke is not applied twice.
        """
        import psycopg

        with self._lock:
            for attempt in (1, 2):
                try:
                    if self._conn.closed or self._conn.broken:
                        self._conn = self._connect()
                    return operation(self._conn)
                except psycopg.Error as error:
                    if attempt == 1 and self._conn.broken:
                        continue
                    raise PostgresStoreError(
                        f"postgres store {self.where}: {what}: {type(error).__name__}: {self._redact(str(error).strip())}"
                    ) from None
            raise AssertionError("unreachable")

    def _create_schema(self) -> None:
        def create(conn) -> None:
            present = conn.execute("SELECT " + ", ".join(f"to_regclass('{t}')" for t in _TABLES)).fetchone()
            if all(present):
                return
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                for statement in _SCHEMA:
                    conn.execute(statement)

        self._run("creating the tables", create)

    # -- port ----------------------------------------------------------------
    def create_run(self, manifest: RunManifest) -> None:
        stored = manifest.model_dump_json()

        def insert(conn) -> None:
            row = conn.execute(
                "INSERT INTO culturebias_runs (run_id, benchmark, manifest, status, created_at) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (run_id) DO NOTHING RETURNING run_id",
                (manifest.run_id, manifest.benchmark, stored, manifest.status, manifest.created_at),
            ).fetchone()
            if row is None:
                existing = conn.execute("SELECT manifest FROM culturebias_runs WHERE run_id = %s", (manifest.run_id,)).fetchone()
                if existing is None or existing[0] != stored:  # the same manifest: our own insert, retried
                    raise PostgresStoreError(f"postgres store {self.where}: run {manifest.run_id} already exists")

        self._run(f"creating run {manifest.run_id}", insert)

    def _manifests(self, conn, rows: list[tuple]) -> list[RunManifest]:
        progress: dict[str, dict[str, dict[str, int]]] = {}
        leases: dict[str, Any] = {}  # Any: JSON payloads (the ResultStore port's)
        if rows:
            run_ids = [r[0] for r in rows]
            for run_id, stage, done, total in conn.execute(
                "SELECT run_id, stage, done, total FROM culturebias_progress WHERE run_id = ANY(%s)", (run_ids,)
            ):
                progress.setdefault(run_id, {})[stage] = {"done": done, "total": total}
            for run_id, lease in conn.execute(
                "SELECT run_id, lease FROM culturebias_leases WHERE run_id = ANY(%s) AND lease IS NOT NULL", (run_ids,)
            ):
                leases[run_id] = json.loads(lease)
        manifests = []
        for run_id, manifest, status, finished_at, failure in rows:
            values = json.loads(manifest)
            values.update(
                status=status, finished_at=finished_at, failure=failure, progress=progress.get(run_id, {}), lease=leases.get(run_id)
            )
            manifests.append(RunManifest.model_validate(values))
        return manifests

    def get_run(self, run_id: str) -> RunManifest | None:
        def select(conn) -> RunManifest | None:
            rows = conn.execute(f"SELECT {_RUN_COLUMNS} FROM culturebias_runs WHERE run_id = %s", (run_id,)).fetchall()
            found = self._manifests(conn, rows)
            return found[0] if found else None

        return self._run(f"reading run {run_id}", select)

    def find_runs(self, benchmark: str | None = None) -> list[RunManifest]:
        def select(conn) -> list[RunManifest]:
            if benchmark is None:
                rows = conn.execute(f"SELECT {_RUN_COLUMNS} FROM culturebias_runs ORDER BY created_at, seq").fetchall()
            else:
                rows = conn.execute(
                    f"SELECT {_RUN_COLUMNS} FROM culturebias_runs WHERE benchmark = %s ORDER BY created_at, seq", (benchmark,)
                ).fetchall()
            return self._manifests(conn, rows)

        return self._run("listing runs", select)

    def load_results(self, run_id: str, stage: str) -> dict[str, dict[str, Any]]:  # Any: JSON payloads (the ResultStore port's)
        def select(conn) -> dict[str, dict[str, Any]]:  # Any: JSON payloads (the ResultStore port's)
            rows = conn.execute(
                "SELECT key, payload FROM culturebias_results WHERE run_id = %s AND stage = %s", (run_id, stage)
            )
            return {key: json.loads(payload) for key, payload in rows}

        return self._run(f"reading {stage} results of run {run_id}", select)

    def save_results(
        self, run_id: str, stage: str, results: Mapping[str, Mapping[str, Any]], progress: StageProgress | None = None  # Any: JSON payloads (the ResultStore port's)
    ) -> None:
        keys = list(results)
        payloads = [json.dumps(results[key], ensure_ascii=False) for key in keys]

        def upsert(conn) -> None:
            with conn.transaction():
                if keys:
                    conn.execute(
                        "INSERT INTO culturebias_results (run_id, stage, key, payload) "
                        "SELECT %s, %s, k, p FROM unnest(%s::text[], %s::text[]) AS batch(k, p) "
                        "ON CONFLICT (run_id, stage, key) DO UPDATE SET payload = EXCLUDED.payload",
                        (run_id, stage, keys, payloads),
                    )
                if progress is not None:
                    conn.execute(
                        "INSERT INTO culturebias_progress (run_id, stage, done, total) VALUES (%s, %s, %s, %s) "
                        "ON CONFLICT (run_id, stage) DO UPDATE SET done = EXCLUDED.done, total = EXCLUDED.total",
                        (run_id, stage, progress.done, progress.total),
                    )

        self._run(f"saving {stage} results of run {run_id}", upsert)

    def _set_status(self, what: str, run_id: str, sql: str, params: tuple) -> None:
        def update(conn) -> None:
            with conn.transaction():
                conn.execute(sql, params)

        self._run(f"{what} run {run_id}", update)

    def finish_run(self, run_id: str, summary: Mapping[str, Any]) -> None:  # Any: JSON payloads (the ResultStore port's)
        self._set_status(
            "finishing",
            run_id,
            "UPDATE culturebias_runs SET status = 'finished', finished_at = %s, summary = %s, failure = NULL WHERE run_id = %s",
            (utc_now(), json.dumps(summary, ensure_ascii=False), run_id),
        )

    def mark_failed(self, run_id: str, reason: str) -> None:
        self._set_status(
            "marking failed", run_id, "UPDATE culturebias_runs SET status = 'failed', failure = %s WHERE run_id = %s", (reason, run_id)
        )

    def mark_interrupted(self, run_id: str, reason: str) -> None:
        self._set_status(
            "marking interrupted",
            run_id,
            "UPDATE culturebias_runs SET status = 'interrupted', failure = %s WHERE run_id = %s",
            (reason, run_id),
        )

    def mark_running(self, run_id: str) -> None:
        self._set_status(
            "resuming", run_id, "UPDATE culturebias_runs SET status = 'running', failure = NULL WHERE run_id = %s", (run_id,)
        )

    def load_summary(self, run_id: str) -> dict[str, Any] | None:  # Any: JSON payloads (the ResultStore port's)
        def select(conn) -> dict[str, Any] | None:  # Any: JSON payloads (the ResultStore port's)
            row = conn.execute("SELECT summary FROM culturebias_runs WHERE run_id = %s", (run_id,)).fetchone()
            return json.loads(row[0]) if row and row[0] else None

        return self._run(f"reading the summary of run {run_id}", select)

    def acquire_lease(self, run_id: str, lease: RunLease, stale_before: str, replacing: str | None = None) -> RunLease | None:
        select = "SELECT lease FROM culturebias_leases WHERE run_id = %s FOR UPDATE"

        def take(conn) -> RunLease | None:
            with conn.transaction():
                row = conn.execute(select, (run_id,)).fetchone()
                if row is None:
                    inserted = conn.execute(
                        "INSERT INTO culturebias_leases (run_id, lease) VALUES (%s, %s) ON CONFLICT (run_id) DO NOTHING RETURNING run_id",
                        (run_id, lease.model_dump_json()),
                    ).fetchone()
                    if inserted is not None:
                        return None
                    row = conn.execute(select, (run_id,)).fetchone()  # another process inserted it first
                held = RunLease.model_validate_json(row[0]) if row[0] is not None else None
                if held is not None and not held.gives_way(lease, stale_before, replacing):
                    return held
                conn.execute("UPDATE culturebias_leases SET lease = %s WHERE run_id = %s", (lease.model_dump_json(), run_id))
                return None

        return self._run(f"taking the lease of run {run_id}", take)

    def renew_lease(self, run_id: str, token: str, heartbeat_at: str) -> bool:
        def renew(conn) -> bool:
            with conn.transaction():
                row = conn.execute("SELECT lease FROM culturebias_leases WHERE run_id = %s FOR UPDATE", (run_id,)).fetchone()
                held = RunLease.model_validate_json(row[0]) if row and row[0] is not None else None
                if held is None or held.token != token:
                    return False
                renewed = held.model_copy(update={"heartbeat_at": heartbeat_at})
                conn.execute("UPDATE culturebias_leases SET lease = %s WHERE run_id = %s", (renewed.model_dump_json(), run_id))
                return True

        return self._run(f"renewing the lease of run {run_id}", renew)

    def release_lease(self, run_id: str, token: str) -> None:
        def release(conn) -> None:
            with conn.transaction():
                row = conn.execute("SELECT lease FROM culturebias_leases WHERE run_id = %s FOR UPDATE", (run_id,)).fetchone()
                if row and row[0] is not None and RunLease.model_validate_json(row[0]).token == token:
                    conn.execute("UPDATE culturebias_leases SET lease = NULL WHERE run_id = %s", (run_id,))

        self._run(f"releasing the lease of run {run_id}", release)

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def open_store(path: str | Path | None, settings: PostgresSettings | None) -> PostgresResultStore:
    """The registry's factory: ``StoreDescriptor.open(path, settings)``."""
    return PostgresResultStore(path, settings)
