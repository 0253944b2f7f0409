"""``application.run_store``: the store a run folder is read from (override, its summary's store, its folder),
and ``adapters.stores.recorded_store``: what a summary's ``config.store`` names, a DSN's secret never from the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from culturebias.adapters.stores.recorded_store import recorded_store, without_redacted_password
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.application.run_lease import LeaseRule, RunLeaseKeeper
from culturebias.application.run_store import open_run_store, refuse_live_run, run_store
from culturebias.bootstrap.archive import ARCHIVE
from culturebias.domain.errors import DataError
from culturebias.domain.runs import RunInUseError, RunManifest


def run_folder(tmp_path: Path, store: dict | None, name: str = "run") -> Path:
    """A run folder whose summary.json records ``store`` as its configuration's store section."""
    folder = tmp_path / name
    folder.mkdir()
    config = {"store": store} if store is not None else {}
    (folder / "summary.json").write_text(json.dumps({"run_id": "r1", "config": config}), encoding="utf-8")
    return folder


def sqlite_store(path: Path) -> Path:
    SQLiteResultStore(path).close()
    return path


def test_a_summary_naming_a_store_elsewhere_is_read_from_that_store(tmp_path):
    team = sqlite_store(tmp_path / "team.sqlite")
    folder = run_folder(tmp_path, {"backend": "sqlite", "path": str(team)})
    assert run_store(folder, None, ARCHIVE) == team
    assert run_store(folder / "summary.json", None, ARCHIVE) == team
    opened = open_run_store(folder, None, ARCHIVE)
    try:
        assert opened.find_runs() == []
    finally:
        opened.close()


def test_the_store_given_overrides_the_summary(tmp_path):
    folder = run_folder(tmp_path, {"backend": "sqlite", "path": str(tmp_path / "gone.sqlite")})
    assert run_store(folder, "other.sqlite", ARCHIVE) == "other.sqlite"


@pytest.mark.parametrize("store", [None, {"backend": "sqlite", "path": None}, {"backend": "sqlite"}])
def test_a_summary_naming_no_store_of_its_own_and_a_folder_without_summary_read_the_folder(tmp_path, store):
    folder = run_folder(tmp_path, store)
    assert run_store(folder, None, ARCHIVE) == folder
    bare = tmp_path / "killed"
    bare.mkdir()
    assert run_store(bare, None, ARCHIVE) == bare


def test_a_relative_store_path_is_found_from_the_working_folder_or_beside_the_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sqlite_store(tmp_path / "team.sqlite")
    folder = run_folder(tmp_path, {"backend": "sqlite", "path": "team.sqlite"})
    assert run_store(folder, None, ARCHIVE) == tmp_path / "team.sqlite"
    beside = run_folder(tmp_path, {"backend": "sqlite", "path": "own.sqlite"}, name="elsewhere")
    sqlite_store(beside / "own.sqlite")
    assert run_store(beside, None, ARCHIVE) == beside / "own.sqlite"


def test_a_moved_store_is_one_line_naming_where_it_was_unless_the_folder_has_its_own(tmp_path):
    gone = tmp_path / "moved-away.sqlite"
    folder = run_folder(tmp_path, {"backend": "sqlite", "path": str(gone)})
    with pytest.raises(DataError) as raised:
        run_store(folder, None, ARCHIVE)
    message = str(raised.value)
    assert "\n" not in message and str(gone) in message and "--store" in message
    assert raised.value.field == "config.store.path"
    sqlite_store(folder / "results.sqlite")  # the folder travelled with its own store
    assert run_store(folder, None, ARCHIVE) == folder


@pytest.mark.parametrize(
    ("dsn", "clean"),
    [
        ("postgresql://u:**redacted**@h:5432/db", "postgresql://u@h:5432/db"),
        ("postgresql://u@h/db?sslmode=require&password=**redacted**", "postgresql://u@h/db?sslmode=require"),
        ("postgresql://u@h/db?password=**redacted**&sslmode=require", "postgresql://u@h/db?sslmode=require"),
        ("host=h user=u password=**redacted** dbname=d", "host=h user=u dbname=d"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
    ],
)
def test_the_redacted_password_is_left_out_of_a_recorded_dsn(dsn, clean):
    assert without_redacted_password(dsn) == clean


def test_a_dsn_takes_its_secret_from_the_environment_never_from_the_summary(tmp_path):
    section = {"backend": "postgres", "dsn": "postgresql://u:**redacted**@h/db", "password_env": "TEAM_PG"}
    with pytest.raises(DataError) as raised:
        recorded_store(section, tmp_path, "summary.json", environ={})
    assert "$TEAM_PG" in str(raised.value) and "--store" in str(raised.value) and "\n" not in str(raised.value)
    named = recorded_store(section, tmp_path, "summary.json", environ={"TEAM_PG": "s3cret"})
    assert named == {"backend": "postgres", "dsn": "postgresql://u@h/db", "password_env": "TEAM_PG", "password_file": None}
    assert "s3cret" not in json.dumps(named)  # the store reads the variable itself when it connects
    on_file = recorded_store({**section, "password_file": "/run/secrets/pg"}, tmp_path, "summary.json", environ={})
    assert isinstance(on_file, dict) and on_file["password_file"] == "/run/secrets/pg"
    # no password written in the DSN, the default variable: libpq's own sources (~/.pgpass) may serve it
    plain = recorded_store({"backend": "postgres", "dsn": "postgresql://u@h/db"}, tmp_path, "summary.json", environ={})
    assert isinstance(plain, dict) and plain["password_env"] == "PGPASSWORD"


def test_a_run_another_live_process_writes_is_refused_and_one_left_by_a_gone_process_is_not(tmp_path):
    store = SQLiteResultStore(tmp_path / "s.sqlite")
    try:
        store.create_run(RunManifest(run_id="r1", benchmark="kobbq", config={}, config_fingerprint="c", data_fingerprint="d"))
        keeper = RunLeaseKeeper(store, "r1")
        assert keeper.acquire(heartbeat=False) is None
        manifest = store.get_run("r1")
        assert manifest is not None and manifest.status == "running"
        with pytest.raises(RunInUseError, match="export reads a run once it has ended"):
            refuse_live_run(manifest, "export")
        refuse_live_run(manifest, "export", LeaseRule(alive=lambda pid: False))  # its process is gone
        keeper.release()
        refuse_live_run(store.get_run("r1"), "export")  # no lease: nobody writes it
    finally:
        store.close()


def test_a_run_that_ended_before_its_summary_is_found_through_the_store_its_journal_recorded(tmp_path):
    from culturebias.application.out_folder import OutputFolder

    team = sqlite_store(tmp_path / "shared" / "team.sqlite")
    folder = tmp_path / "failed"
    OutputFolder(folder).begin("r1", "kobbq", store={"backend": "sqlite", "path": str(team), "dsn": None})
    assert run_store(folder, None, ARCHIVE) == team
    OutputFolder(folder).ended("r1", "failed", "the server went away")
    assert run_store(folder, None, ARCHIVE) == team
    OutputFolder(folder).written("r1", "kobbq", [])  # its files written later (--resume): the record stays
    assert OutputFolder(folder).recorded_store() == {"backend": "sqlite", "path": str(team), "dsn": None}
    team.unlink()
    with pytest.raises(DataError) as moved:
        run_store(folder, None, ARCHIVE)
    assert str(team) in str(moved.value) and "its record says" in str(moved.value) and "--store" in str(moved.value)
    assert ".culturebias-outputs.json" in str(moved.value)
    # a folder without summary or recorded store is its own store, and a path that is no folder reads no journal
    OutputFolder(tmp_path / "own").begin("r2", "kobbq")
    assert run_store(tmp_path / "own", None, ARCHIVE) == tmp_path / "own"
    assert ARCHIVE.recorded_store(tmp_path / "own" / "summary.json") is None


def test_the_configuration_a_run_records_names_its_store_path_absolute(tmp_path, monkeypatch):
    from culturebias.bootstrap.settings import load_settings

    monkeypatch.chdir(tmp_path)
    recorded = load_settings(None, ["store.path=shared/team.sqlite"]).redacted()["store"]
    assert recorded["path"] == str(tmp_path / "shared" / "team.sqlite")
    assert load_settings(None, []).redacted()["store"]["path"] is None
    # found again from another working folder; an old summary's relative path still reads as before
    (tmp_path / "shared").mkdir()
    sqlite_store(tmp_path / "shared" / "team.sqlite")
    folder = run_folder(tmp_path, {"backend": "sqlite", "path": recorded["path"]})
    monkeypatch.chdir(folder)
    assert run_store(folder, None, ARCHIVE) == tmp_path / "shared" / "team.sqlite"


def test_resume_in_a_folder_whose_run_is_in_another_store_says_so_before_starting_afresh(tmp_path):
    from types import SimpleNamespace

    from structlog.testing import capture_logs

    from culturebias.application.run_benchmark import _open_run

    store = SQLiteResultStore(tmp_path / "here.sqlite")
    request = SimpleNamespace(store=store, lease_seconds=60.0, resume=True, benchmark="kobbq", config_fingerprint="c",
                              config={}, identity={})
    try:
        with capture_logs() as logs:
            manifest, keeper = _open_run(request, "d", "kobbq-elsewhere", {"backend": "sqlite", "path": "/srv/team.sqlite"})
        keeper.release()
        assert manifest.run_id != "kobbq-elsewhere"
        [warned] = [e for e in logs if e["log_level"] == "warning"]
        assert "/srv/team.sqlite" in warned["event"] and warned["folder_run_id"] == "kobbq-elsewhere"
        with capture_logs() as logs:  # the folder's run in this store (finished): nothing to say
            _open_run(request, "d", manifest.run_id, None)[1].release()
        assert not [e for e in logs if e["log_level"] == "warning"]
    finally:
        store.close()
