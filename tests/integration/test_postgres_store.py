"""The PostgreSQL store against a real server on 127.0.0.1: runs, resume, several writers at once, secrets.

The store contract (lifecycle, round trips, a SIGKILLed writer) is in
tests/contract/test_result_store_contract.py; this file covers what only a
shared database server has: concurrent runs and schema creation, passwords
that must never be written anywhere, and a connection that goes away.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from culturebias.adapters.stores.postgres_store import PostgresConnectError, PostgresResultStore, PostgresStoreError
from culturebias.bootstrap.cli import main
from culturebias.bootstrap.settings import StoreSettings, load_settings
from culturebias.domain.errors import ConfigError
from culturebias.domain.redaction import REDACTED, redact_dsn
from culturebias.domain.runs import RunLease, RunManifest
from culturebias.testing.postgres_server import PostgresServer, postgres_server, postgres_store_settings  # noqa: F401


def kobbq_replay(path: Path, limit: int, prompts: tuple[str, ...] = ("1", "2")) -> Path:
    sys.path.insert(0, str(Path(__file__).parent))
    from test_bbq_cli import kobbq_replay as write

    return write(path, prompts=prompts, limit=limit)


def replay_arguments(answers: Path, limit: int, prompts: str = "1,2") -> list[str]:
    sets = [
        "run.progress=false",
        "model.backend=replay",
        f"model.path={answers}",
        f"protocol.prompts={prompts}",
        f"protocol.limit={limit}",
        "protocol.statistics=false",
    ]
    return [part for assignment in sets for part in ("--set", assignment)]


def store_arguments(settings: StoreSettings) -> list[str]:
    sets = ["store.backend=postgres", f"store.dsn={settings.dsn}"]
    if settings.password_file:
        sets.append(f"store.password_file={settings.password_file}")
    if settings.password_env != "PGPASSWORD":
        sets.append(f"store.password_env={settings.password_env}")
    return [part for assignment in sets for part in ("--set", assignment)]


def manifest(run_id: str) -> RunManifest:
    return RunManifest(run_id=run_id, benchmark="kobbq", config={}, config_fingerprint="c", data_fingerprint="d")


def rows(server: PostgresServer, dsn: str, sql: str, params: tuple = ()) -> list[tuple]:
    import psycopg

    with psycopg.connect(dsn, password=server.password) as connection:
        return connection.execute(sql, params).fetchall()  # type: ignore[arg-type]


def stored_results(server: PostgresServer, dsn: str, run_id: str) -> dict[tuple[str, str], object]:
    found = rows(server, dsn, "SELECT stage, key, payload FROM culturebias_results WHERE run_id = %s", (run_id,))
    return {(stage, key): json.loads(payload) for stage, key, payload in found}


def sqlite_results(path: Path, run_id: str) -> dict[tuple[str, str], object]:
    import sqlite3

    with sqlite3.connect(path) as db:
        found = db.execute("SELECT stage, key, payload FROM results WHERE run_id = ?", (run_id,)).fetchall()
    return {(stage, key): json.loads(payload) for stage, key, payload in found}


def test_a_benchmark_runs_into_postgres_fails_resumes_and_is_listed(postgres_server, postgres_store_settings, tmp_path, capsys):
    answers = tmp_path / "answers.jsonl"
    answers.write_text("", encoding="utf-8")  # no answers: the first run fails after creating its run
    out = tmp_path / "kobbq_pg"
    arguments = ["run", "kobbq", "--out", str(out), *replay_arguments(answers, 6), *store_arguments(postgres_store_settings)]
    assert main(arguments) == 3
    assert not (out / "results.sqlite").exists(), "a server store keeps nothing in the output folder"
    capsys.readouterr()
    assert main(["runs", "--out", str(out), "--format", "json"]) == 0  # the journal names the server, not its password
    assert [r["status"] for r in json.loads(capsys.readouterr().out)] == ["failed"]
    assert postgres_server.password not in (out / ".culturebias-outputs.json").read_text(encoding="utf-8")
    kobbq_replay(answers, 6)
    assert main([*arguments, "--resume"]) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))

    store = PostgresResultStore(None, postgres_store_settings)
    runs = store.find_runs("kobbq")
    assert [(r.run_id, r.status) for r in runs] == [(summary["run_id"], "finished")], "--resume continued the failed run"
    assert store.load_summary(summary["run_id"]) == summary
    assert len(store.load_results(summary["run_id"], "generation")) == 6 * 2 * 3
    store.close()

    capsys.readouterr()
    assert main(["runs", "--format", "json", *store_arguments(postgres_store_settings)]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(r["run_id"], r["status"]) for r in listed] == [(summary["run_id"], "finished")]
    items = tmp_path / "items.jsonl"  # read back by folder through the server its summary names
    assert main(["export", str(out), "--format", "jsonl", "--out", str(items)]) == 0
    assert len(items.read_text(encoding="utf-8").splitlines()) == 6 * 2 * 3


def test_the_same_run_gives_the_same_results_in_postgres_and_sqlite(postgres_server, postgres_store_settings, tmp_path):
    answers = kobbq_replay(tmp_path / "answers.jsonl", 6)
    assert main(["run", "kobbq", "--out", str(tmp_path / "kobbq_sqlite"), *replay_arguments(answers, 6)]) == 0
    out = tmp_path / "kobbq_pg"
    in_postgres_store = store_arguments(postgres_store_settings)
    assert main(["run", "kobbq", "--out", str(out), *replay_arguments(answers, 6), *in_postgres_store]) == 0
    in_sqlite = json.loads((tmp_path / "kobbq_sqlite" / "summary.json").read_text(encoding="utf-8"))
    in_postgres = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert in_postgres["metrics"] == in_sqlite["metrics"] and in_postgres["counts"] == in_sqlite["counts"]
    assert stored_results(postgres_server, postgres_store_settings.dsn, in_postgres["run_id"]) == sqlite_results(
        tmp_path / "kobbq_sqlite" / "results.sqlite", in_sqlite["run_id"]
    )


def test_two_runs_write_one_database_at_once_and_neither_mixes_with_the_other(postgres_server, postgres_store_settings, tmp_path):
    """Two processes, one fresh database (so they also race to create the tables), small transactions."""
    answers = kobbq_replay(tmp_path / "answers.jsonl", 8, prompts=("1", "2", "3", "4"))
    configs = {"a": "1,2", "b": "3,4"}
    for name, prompts in configs.items():  # the reference: each run alone, into its own SQLite file
        reference = ["run", "kobbq", "--out", str(tmp_path / f"kobbq_ref_{name}"), *replay_arguments(answers, 8, prompts)]
        assert main([*reference, "--set", "run.chunk_size=4"]) == 0
    processes = {
        name: subprocess.Popen(
            [
                sys.executable, "-m", "culturebias.bootstrap.cli", "run", "kobbq", "--out", str(tmp_path / f"kobbq_pg_{name}"),
                *replay_arguments(answers, 8, prompts), *store_arguments(postgres_store_settings), "--set", "run.chunk_size=4",
            ],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        for name, prompts in configs.items()
    }
    for name, process in processes.items():
        output, _ = process.communicate(timeout=300)
        assert process.returncode == 0, f"run {name}: {output}"

    store = PostgresResultStore(None, postgres_store_settings)
    assert sorted(r.status for r in store.find_runs("kobbq")) == ["finished", "finished"]
    store.close()
    for name in configs:
        reference = json.loads((tmp_path / f"kobbq_ref_{name}" / "summary.json").read_text(encoding="utf-8"))
        written = json.loads((tmp_path / f"kobbq_pg_{name}" / "summary.json").read_text(encoding="utf-8"))
        assert written["metrics"] == reference["metrics"]
        assert stored_results(postgres_server, postgres_store_settings.dsn, written["run_id"]) == sqlite_results(
            tmp_path / f"kobbq_ref_{name}" / "results.sqlite", reference["run_id"]
        ), f"run {name}'s stored results are not exactly its own"


WRITER = """
import json, sys, time
from pathlib import Path
from culturebias.bootstrap.registry import registry
from culturebias.bootstrap.settings import StoreSettings
from culturebias.domain.runs import RunLease, RunManifest
settings, name, go = StoreSettings.model_validate_json(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
while not go.exists():  # every writer opens the store (and creates the tables) at the same moment
    time.sleep(0.01)
store = registry().store("postgres").open(None, settings)
store.create_run(RunManifest(run_id=name, benchmark="kobbq", config={}, config_fingerprint="c", data_fingerprint="d"))
for batch in range(40):
    store.save_results(name, "generation", {f"k{batch}-{i}": {"writer": name, "i": i} for i in range(25)})
store.finish_run(name, {"writer": name})
store.close()
"""


def test_concurrent_writers_create_the_tables_once_and_keep_their_own_rows(postgres_store_settings, tmp_path):
    go = tmp_path / "go"
    names = [f"writer-{n}" for n in range(4)]
    settings = postgres_store_settings.model_dump_json()
    processes = [
        subprocess.Popen([sys.executable, "-c", WRITER, settings, name, str(go)], stderr=subprocess.PIPE, text=True)
        for name in names
    ]
    go.touch()
    for process in processes:
        _, errors = process.communicate(timeout=120)
        assert process.returncode == 0, errors
    store = PostgresResultStore(None, postgres_store_settings)
    assert sorted((r.run_id, r.status) for r in store.find_runs()) == [(name, "finished") for name in names]
    for name in names:
        results = store.load_results(name, "generation")
        assert len(results) == 40 * 25 and {r["writer"] for r in results.values()} == {name}
        assert store.load_summary(name) == {"writer": name}
    store.close()


def test_a_password_in_the_dsn_reaches_no_summary_store_log_or_error(postgres_server, tmp_path, capfd):
    password = f"Pw-{uuid.uuid4().hex}"
    database = f"audit_{uuid.uuid4().hex[:8]}"
    postgres_server.execute(f"CREATE ROLE {database} LOGIN PASSWORD '{password}'")
    postgres_server.execute(f"CREATE DATABASE {database} OWNER {database}")
    dsn = f"postgresql://{database}:{password}@127.0.0.1:{postgres_server.port}/{database}"
    answers = kobbq_replay(tmp_path / "answers.jsonl", 4)

    def run(out: str, dsn: str) -> int:
        store = ["--set", "store.backend=postgres", "--set", f"store.dsn={dsn}", "--set", "run.log_format=json"]
        return main(["run", "kobbq", "--out", str(tmp_path / out), *replay_arguments(answers, 4), *store])

    assert run("kobbq_secret", dsn) == 0
    summary = json.loads((tmp_path / "kobbq_secret" / "summary.json").read_text(encoding="utf-8"))
    assert summary["config"]["store"]["dsn"] == dsn.replace(password, REDACTED)
    written = [p.read_text(encoding="utf-8") for p in (tmp_path / "kobbq_secret").iterdir() if p.suffix in {".json", ".md"}]
    superuser = postgres_server.dsn(database)
    in_database = rows(postgres_server, superuser, "SELECT run_id, manifest, coalesce(summary, '') FROM culturebias_runs")
    in_database += rows(postgres_server, superuser, "SELECT key, payload FROM culturebias_results")
    assert in_database
    wrong = password[::-1]
    assert run("kobbq_wrong", dsn.replace(password, wrong)) == 2
    printed = capfd.readouterr()
    assert "password authentication failed" in printed.err and "Traceback" not in printed.err
    for text in [*written, *(value for row in in_database for value in row), printed.out, printed.err]:
        assert password not in text and wrong not in text


def test_the_password_comes_from_a_named_variable_or_a_file(postgres_server, postgres_store_settings, tmp_path, monkeypatch):
    by_variable = postgres_store_settings.model_copy(
        update={"password_file": None, "password_env": "CULTUREBIAS_TEST_PG_PASSWORD"}
    )
    monkeypatch.setenv("CULTUREBIAS_TEST_PG_PASSWORD", postgres_server.password)
    PostgresResultStore(None, by_variable).close()
    monkeypatch.delenv("CULTUREBIAS_TEST_PG_PASSWORD")
    monkeypatch.delenv("PGPASSWORD", raising=False)
    with pytest.raises(PostgresConnectError, match="no password supplied.*store.password_env, or store.password_file"):
        PostgresResultStore(None, by_variable)

    wrong_file = tmp_path / "wrong-password"
    wrong_file.write_text("not-the-password\n", encoding="utf-8")
    with pytest.raises(PostgresConnectError, match="password authentication failed") as refused:
        PostgresResultStore(None, postgres_store_settings.model_copy(update={"password_file": str(wrong_file)}))
    assert "not-the-password" not in str(refused.value)
    with pytest.raises(ConfigError, match="store.password_file .*missing.*cannot read it"):
        PostgresResultStore(None, postgres_store_settings.model_copy(update={"password_file": str(tmp_path / "missing")}))

    monkeypatch.setenv("PGPASSWORD", postgres_server.password)  # libpq's own variable, and a DSN string for the API
    import culturebias

    assert culturebias.list_runs(postgres_store_settings.dsn) == []


def test_a_store_needs_a_dsn_and_settings_name_it():
    with pytest.raises(ConfigError, match="store.backend=postgres needs store.dsn"):
        PostgresResultStore(None, StoreSettings(backend="postgres"))
    settings = load_settings(None, ["store.backend=postgres", "store.dsn=postgresql://u:s3cret@db.example:5432/x"])
    assert "s3cret" not in repr(settings) and "s3cret" not in json.dumps(settings.redacted())
    assert "store" not in settings.resume_identity(), "where results go does not change the numbers"


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://u:pw@h:5432/db", f"postgresql://u:{REDACTED}@h:5432/db"),
        ("postgres://u@h1,h2:5433/db?sslmode=require&password=pw", f"postgres://u@h1,h2:5433/db?sslmode=require&password={REDACTED}"),
        ("host=h user=u password=pw dbname=db", f"host=h user=u password={REDACTED} dbname=db"),
        ("host=h password = 'p w' dbname=db", f"host=h password = {REDACTED} dbname=db"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
    ],
)
def test_passwords_are_redacted_from_every_dsn_form(dsn, shown):
    assert redact_dsn(dsn) == shown


def test_a_lost_connection_is_opened_again_and_the_batch_stored_once(postgres_server, postgres_store_settings):
    store = PostgresResultStore(None, postgres_store_settings)
    store.create_run(manifest("r"))
    pid = store._conn.info.backend_pid
    postgres_server.execute(f"SELECT pg_terminate_backend({pid})")
    deadline = time.monotonic() + 30  # a bound, not a timing assumption: wait until the server says it is gone
    while rows(postgres_server, postgres_server.dsn(), "SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)):
        assert time.monotonic() < deadline, "the server did not end the connection"
        time.sleep(0.05)
    store.save_results("r", "generation", {"k": {"v": 1}})
    assert store._conn.info.backend_pid != pid
    assert store.load_results("r", "generation") == {"k": {"v": 1}}
    store.close()


def test_a_failed_operation_is_a_typed_error_naming_the_run_without_the_password(postgres_store_settings):
    store = PostgresResultStore(None, postgres_store_settings)
    store.create_run(manifest("r"))
    with pytest.raises(PostgresStoreError, match=r"saving generation results of run r: .*NUL") as failed:
        store.save_results("r", "generation", {"bad\x00key": {"v": 1}})
    assert postgres_store_settings.dsn.split("/")[-1] in str(failed.value)
    with pytest.raises(PostgresStoreError, match="run r already exists"):
        store.create_run(manifest("r").model_copy(update={"config": {"other": 1}}))
    assert store.load_results("r", "generation") == {}
    store.close()


def test_a_role_that_may_not_create_tables_uses_tables_made_for_it(postgres_server, postgres_store_settings, monkeypatch):
    PostgresResultStore(None, postgres_store_settings).close()  # the tables, made by their owner
    role, password = f"writer_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    database = postgres_store_settings.dsn.rsplit("/", 1)[1]
    postgres_server.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    postgres_server.execute(
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC; "
        f"GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO {role}; "
        f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}",
        database,
    )
    monkeypatch.setenv("CB_WRITER_PASSWORD", password)
    dsn = postgres_store_settings.dsn.replace("//culturebias@", f"//{role}@")
    as_role = StoreSettings(backend="postgres", dsn=dsn, password_env="CB_WRITER_PASSWORD")
    store = PostgresResultStore(None, as_role)
    store.create_run(manifest("w"))
    store.save_results("w", "generation", {"k": {"v": 1}})
    assert store.load_results("w", "generation") == {"k": {"v": 1}}
    held = RunLease(token="t", host="h", pid=1, acquired_at="2030", heartbeat_at="2030")
    assert store.acquire_lease("w", held, stale_before="2000") is None
    store.release_lease("w", "t")  # an UPDATE: the role was granted no DELETE
    assert store.get_run("w").lease is None
    store.close()


def test_a_database_made_before_leases_gets_their_table(postgres_server, postgres_store_settings):
    PostgresResultStore(None, postgres_store_settings).close()
    database = postgres_store_settings.dsn.rsplit("/", 1)[1]
    postgres_server.execute("DROP TABLE culturebias_leases", database)
    store = PostgresResultStore(None, postgres_store_settings)
    store.create_run(manifest("r"))
    held = RunLease(token="t", host="h", pid=1, acquired_at="2030", heartbeat_at="2030")
    assert store.acquire_lease("r", held, stale_before="2000") is None
    assert store.get_run("r").lease == held
    store.close()


def test_the_tables_go_into_the_schema_the_dsn_names(postgres_server, postgres_store_settings):
    database = postgres_store_settings.dsn.rsplit("/", 1)[1]
    postgres_server.execute("CREATE SCHEMA governance", database)
    in_schema = postgres_store_settings.dsn + "?options=-csearch_path%3Dgovernance"
    store = PostgresResultStore(None, postgres_store_settings.model_copy(update={"dsn": in_schema}))
    store.create_run(manifest("r"))
    store.close()
    tables = rows(
        postgres_server,
        postgres_store_settings.dsn,
        "SELECT table_schema, table_name FROM information_schema.tables WHERE table_name LIKE %s",
        ("culturebias%",),
    )
    names = ("culturebias_leases", "culturebias_progress", "culturebias_results", "culturebias_runs")
    assert sorted(tables) == [("governance", t) for t in names]
