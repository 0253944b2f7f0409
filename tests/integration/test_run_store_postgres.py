"""A run kept on a PostgreSQL server is read back by its folder: the DSN its summary.json records, with the
password the run took from the environment taken from the environment again (never from the file)."""

from __future__ import annotations

import json

from culturebias.adapters.stores.postgres_store import PostgresResultStore
from culturebias.bootstrap.cli import main
from culturebias.bootstrap.settings import Settings, StoreSettings
from culturebias.testing.kobbq_runs import kobbq_run
from culturebias.testing.postgres_server import postgres_server  # noqa: F401  (fixture)


def test_a_run_folder_is_read_from_the_server_its_summary_names_with_the_secret_from_the_environment(
    postgres_server, tmp_path, capsys, monkeypatch  # noqa: F811
):
    dsn = postgres_server.create_database()
    with_password = dsn.replace("://culturebias@", f"://culturebias:{postgres_server.password}@")
    assert with_password != dsn
    settings = StoreSettings(backend="postgres", dsn=with_password, password_env="TEAM_PG")
    store = PostgresResultStore(None, settings)
    try:
        result = kobbq_run("unknown", name="served", out_dir=tmp_path / "run", store=store, options={"limit": 60})
    finally:
        store.close()
    summary_file = tmp_path / "run" / "summary.json"
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    summary["config"]["store"] = Settings(store=settings).redacted()["store"]  # what `run` records
    summary_file.write_text(json.dumps(summary, ensure_ascii=False, indent=2), encoding="utf-8")
    assert postgres_server.password not in summary_file.read_text(encoding="utf-8")

    out = tmp_path / "items.jsonl"
    monkeypatch.delenv("TEAM_PG", raising=False)
    assert main(["export", str(tmp_path / "run"), "--format", "jsonl", "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert "$TEAM_PG" in err and len(err.strip().splitlines()) == 1 and not out.exists()

    monkeypatch.setenv("TEAM_PG", postgres_server.password)
    assert main(["export", str(tmp_path / "run"), "--format", "jsonl", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows and {r["run_id"] for r in rows} == {result.run_id}
