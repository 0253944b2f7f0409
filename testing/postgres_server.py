"""A real PostgreSQL server for tests: a fresh cluster in a temp folder, on 127.0.0.1 at a free port.

The cluster asks for a password over TCP (scram-sha-256), as a team's server
would; the password sits in a 0600 file, so stores open with
``store.password_file`` and nothing secret travels in the DSN or the environment.
PostgreSQL refuses to run as root: under root the cluster belongs to the
``postgres`` user and its commands run through ``runuser``.

Reuse it from any test module (plugins too) by importing the fixtures::

    from culturebias.testing.postgres_server import postgres_server, postgres_store_settings  # noqa: F401

``postgres_server`` is session-scoped and shared by every module that imports it
(one server per test session, stopped when the session ends);
``postgres_store_settings`` gives each test its own empty database. Both skip, with
the reason, when the PostgreSQL server binaries are not installed.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import secrets
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from culturebias.testing.served_process import free_port

SUPERUSER = "culturebias"
INSTALL_HINT = "apt-get install -y postgresql (Debian), or put initdb and pg_ctl on PATH"


def server_binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``: $PG_BIN, PATH, or Debian's newest /usr/lib/postgresql/N/bin."""
    candidates = []
    if os.environ.get("PG_BIN"):
        candidates.append(Path(os.environ["PG_BIN"]))
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).parent)
    debian = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    candidates.extend(debian)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


class PostgresServer:
    """``start()`` makes and starts the cluster, ``stop()`` stops it and deletes the folder."""

    def __init__(self, binaries: Path):
        self.binaries = binaries
        self.root: Path | None = None
        self.port = 0
        self.password = secrets.token_urlsafe(18)
        self._owner: pwd.struct_passwd | None = None

    @property
    def password_file(self) -> Path:
        assert self.root is not None
        return self.root / "password"

    def dsn(self, database: str = "postgres") -> str:
        """A DSN without the password (it comes from ``password_file``)."""
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def _command(self, *args: str) -> list[str]:
        if self._owner is None:
            return list(args)
        return ["runuser", "-u", self._owner.pw_name, "--", *args]

    def _give_to_owner(self, path: Path) -> None:
        if self._owner is not None:
            os.chown(path, self._owner.pw_uid, self._owner.pw_gid)

    def start(self) -> "PostgresServer":
        if os.geteuid() == 0:
            try:
                self._owner = pwd.getpwnam("postgres")
            except KeyError:
                self._owner = pwd.getpwnam("nobody")
        self.root = Path(tempfile.mkdtemp(prefix="culturebias-pg-"))
        self._give_to_owner(self.root)
        self.password_file.write_text(self.password + "\n", encoding="utf-8")
        self.password_file.chmod(0o600)  # readable by the tests' user only; initdb reads its own copy
        server_password = self.root / "initdb-password"
        server_password.write_text(self.password + "\n", encoding="utf-8")
        server_password.chmod(0o600)
        self._give_to_owner(server_password)
        data = self.root / "data"
        subprocess.run(
            self._command(
                str(self.binaries / "initdb"), "-D", str(data), "-U", SUPERUSER, f"--pwfile={server_password}",
                "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync",
            ),
            check=True, capture_output=True, text=True,
        )
        server_password.unlink()
        for attempt in range(5):  # another process may take the free port between choosing and binding
            self.port = free_port()
            options = f"-k {self.root} -h 127.0.0.1 -p {self.port} -c max_connections=300 -c fsync=off"
            started = subprocess.run(
                self._command(
                    str(self.binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(self.root / "server.log"), "-w", "start",
                ),
                capture_output=True, text=True,
            )
            if started.returncode == 0:
                return self
        log = (self.root / "server.log").read_text(errors="replace") if (self.root / "server.log").exists() else ""
        self.stop()
        raise RuntimeError(f"PostgreSQL did not start: {started.stderr.strip()}\n{log[-2000:]}")

    def stop(self) -> None:
        if self.root is None:
            return
        data = self.root / "data"
        if (data / "postmaster.pid").exists():
            subprocess.run(
                self._command(str(self.binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"),
                capture_output=True,
            )
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; returns its DSN (no password in it)."""
        import psycopg

        name = name or f"test_{uuid.uuid4().hex[:12]}"
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
            raise ValueError(f"database name {name!r}: use lower-case letters, digits and underscores")
        with psycopg.connect(self.dsn(), password=self.password, autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return self.dsn(name)

    def execute(self, sql: str, database: str = "postgres") -> None:
        """Run one administrative statement (e.g. ``CREATE ROLE``) as the superuser."""
        import psycopg

        with psycopg.connect(self.dsn(database), password=self.password, autocommit=True) as admin:
            admin.execute(sql)


_shared: PostgresServer | None = None
_users = 0


@contextlib.contextmanager
def shared_postgres_server() -> Iterator[PostgresServer]:
    """One server for every user in this process: started by the first, stopped when the last one leaves."""
    global _shared, _users
    if _shared is None:
        binaries = server_binaries()
        if binaries is None:
            pytest.skip(f"PostgreSQL server binaries (initdb, pg_ctl) not found: {INSTALL_HINT}")
        _shared = PostgresServer(binaries).start()
    _users += 1
    try:
        yield _shared
    finally:
        _users -= 1
        if _users == 0:
            _shared.stop()
            _shared = None


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    with shared_postgres_server() as server:
        yield server


@pytest.fixture
def postgres_store_settings(postgres_server: PostgresServer):
    """``store.*`` settings for a fresh database on the session's server (password from a file)."""
    from culturebias.bootstrap.settings import StoreSettings

    return StoreSettings(
        backend="postgres", dsn=postgres_server.create_database(), password_file=str(postgres_server.password_file)
    )
