"""The CLI reads a run folder through the store its summary.json names: ``export``, ``samples``, ``check``
(``--baseline-store``) and ``compare`` with a team's shared SQLite file elsewhere; ``--store`` overrides; a
moved store, a DSN without its secret (exit 3) and a run another process still writes (exit 8) are one line
and write nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.application.out_folder import OutputFolder
from culturebias.application.run_lease import RunLeaseKeeper
from culturebias.bootstrap.cli import main
from culturebias.domain.runs import RunManifest
from culturebias.testing.kobbq_runs import kobbq_run

GATE = """\
name = "gate"

[[criterion]]
name = "no worse than the baseline"
benchmark = "kobbq"
metric = "diff_bias_amb"
not_worse_than_baseline_by = 0.02
allow_limited = true
"""


def team_run(root: Path, name: str, policy: str, store_file: Path) -> tuple[Path, str]:
    """A finished run whose folder holds summary.json and whose records are in ``store_file`` (store.path)."""
    store = SQLiteResultStore(store_file)
    try:
        result = kobbq_run(policy, name=name, out_dir=root / name, store=store, options={"limit": 120})
    finally:
        store.close()
    summary_file = root / name / "summary.json"
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    summary["config"]["store"] = {"backend": "sqlite", "path": str(store_file), "dsn": None,
                                  "password_env": "PGPASSWORD", "password_file": None}  # as `run` records it
    summary_file.write_text(json.dumps(summary, ensure_ascii=False, indent=2), encoding="utf-8")
    assert not (root / name / "results.sqlite").exists()
    return root / name, result.run_id


@pytest.fixture
def team(tmp_path) -> dict[str, tuple[Path, str]]:
    return {
        "current": team_run(tmp_path, "current", "unknown", tmp_path / "shared" / "team.sqlite"),
        "release": team_run(tmp_path, "release", "unknown", tmp_path / "shared" / "team.sqlite"),
        "old": team_run(tmp_path, "old", "unknown", tmp_path / "archive" / "old.sqlite"),
    }


def assert_paired(printed: str) -> None:
    """The baseline criterion was decided on both runs' item records (a small run's interval is wide: decided or not)."""
    assert "paired over the 15 templates both runs share" in printed, printed
    assert "not at hand" not in printed


def one_line(capsys, code: int, expected: int, *fragments: str) -> str:
    err = capsys.readouterr().err
    assert code == expected, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, err
    return err


def test_export_samples_check_and_compare_read_a_run_folder_through_its_summarys_store(team, tmp_path, capsys):
    current, current_id = team["current"]
    release, _ = team["release"]
    out = tmp_path / "items.jsonl"
    assert main(["export", str(current), "--format", "jsonl", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows and {r["run_id"] for r in rows} == {current_id}
    capsys.readouterr()
    assert main(["samples", str(current / "summary.json"), "--limit", "2"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 3  # the header and two items
    gate = tmp_path / "gate.toml"
    gate.write_text(GATE, encoding="utf-8")
    main(["check", str(gate), "--run", str(current), "--baseline", str(release)])
    assert_paired(capsys.readouterr().out)
    assert main(["compare", str(current), str(release), "--out", str(tmp_path / "cmp")]) == 0


def test_store_overrides_and_a_baseline_in_another_store(team, tmp_path, capsys):
    current, _ = team["current"]
    _, old_id = team["old"]
    gate = tmp_path / "gate.toml"
    gate.write_text(GATE, encoding="utf-8")
    archive = str(tmp_path / "archive" / "old.sqlite")
    # --store overrides the summary's store: the run is not in the archive
    one_line(capsys, main(["export", str(current), "--format", "jsonl", "--out", str(tmp_path / "x.jsonl"),
                           "--store", archive]), 3, "no run")
    assert not (tmp_path / "x.jsonl").exists()
    # the baseline by its id in another store than the run's
    main(["check", str(gate), "--run", str(current), "--baseline", old_id, "--baseline-store", archive])
    assert_paired(capsys.readouterr().out)
    # without it the baseline id is looked up where nothing names it
    assert main(["check", str(gate), "--run", str(current), "--baseline", old_id]) == 3


def test_a_moved_store_is_one_line_naming_where_it_was_and_writes_nothing(team, tmp_path, capsys):
    current, current_id = team["current"]
    shared = tmp_path / "shared" / "team.sqlite"
    moved = tmp_path / "moved.sqlite"
    shared.rename(moved)
    out = tmp_path / "items.jsonl"
    for command in (["export", str(current), "--format", "jsonl", "--out", str(out)], ["samples", str(current)]):
        one_line(capsys, main(command), 3, str(shared), "--store")
    assert not out.exists()
    gate = tmp_path / "gate.toml"
    gate.write_text(GATE, encoding="utf-8")
    one_line(capsys, main(["check", str(gate), "--run", str(current), "--baseline", str(team["release"][0]),
                           "--json", str(tmp_path / "verdict.json")]), 3, str(shared))
    assert not (tmp_path / "verdict.json").exists()
    assert main(["export", str(current), "--format", "jsonl", "--out", str(out), "--store", str(moved)]) == 0
    assert {json.loads(line)["run_id"] for line in out.read_text(encoding="utf-8").splitlines()} == {current_id}


def test_a_dsn_whose_secret_is_not_in_the_environment_is_one_line_exit_3(team, tmp_path, capsys, monkeypatch):
    current, _ = team["current"]
    monkeypatch.delenv("TEAM_PG_PASSWORD", raising=False)
    summary_file = current / "summary.json"
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    summary["config"]["store"] = {"backend": "postgres", "path": None, "dsn": "postgresql://team:**redacted**@127.0.0.1:9/runs",
                                  "password_env": "TEAM_PG_PASSWORD", "password_file": None}
    summary_file.write_text(json.dumps(summary), encoding="utf-8")
    out = tmp_path / "items.jsonl"
    one_line(capsys, main(["export", str(current), "--format", "jsonl", "--out", str(out)]), 3, "$TEAM_PG_PASSWORD")
    assert not out.exists()


def test_an_export_of_a_run_another_live_process_writes_is_refused_with_exit_8(tmp_path, capsys):
    folder = tmp_path / "running"
    folder.mkdir()
    store = SQLiteResultStore(folder / "results.sqlite")
    try:
        store.create_run(RunManifest(run_id="kobbq-live", benchmark="kobbq", config={}, config_fingerprint="c",
                                     data_fingerprint="d"))
        keeper = RunLeaseKeeper(store, "kobbq-live")
        assert keeper.acquire(heartbeat=False) is None  # this process writes it
        (folder / ".culturebias-outputs.json").write_text(
            json.dumps({"run_id": "kobbq-live", "benchmark": "kobbq", "state": "running", "files": []}), encoding="utf-8")
        out = tmp_path / "items.jsonl"
        one_line(capsys, main(["export", str(folder), "--format", "jsonl", "--out", str(out)]), 8,
                 "kobbq-live", f"process {os.getpid()}")
        assert not out.exists()
        # the other exports and compare read its summary, which a running run has not written yet: refused alike
        one_line(capsys, main(["export", str(folder), "--format", "every-eval-ever", "--out", str(out)]), 8, "kobbq-live")
        one_line(capsys, main(["compare", str(folder), str(folder), "--out", str(tmp_path / "cmp")]), 8, "kobbq-live")
        assert not (tmp_path / "cmp").exists()
        assert not out.exists()
        keeper.release()
        assert main(["samples", str(folder)]) == 0  # looking at what is stored so far is not refused
    finally:
        store.close()


def test_runs_out_lists_a_failed_run_from_the_store_its_journal_names_and_check_of_a_live_run_is_exit_8(tmp_path, capsys):
    team = tmp_path / "shared" / "team.sqlite"
    store = SQLiteResultStore(team)
    try:
        for run_id in ("kobbq-failed", "kobbq-live"):
            store.create_run(RunManifest(run_id=run_id, benchmark="kobbq", config={}, config_fingerprint="c",
                                         data_fingerprint="d"))
        store.mark_failed("kobbq-failed", "ConnectionError: the server went away")
        section = {"backend": "sqlite", "path": str(team), "dsn": None}
        OutputFolder(tmp_path / "failed").begin("kobbq-failed", "kobbq", store=section)
        OutputFolder(tmp_path / "failed").ended("kobbq-failed", "failed", "ConnectionError: the server went away")
        capsys.readouterr()
        assert main(["runs", "--out", str(tmp_path / "failed"), "--format", "json"]) == 0  # no --store needed
        rows = {row["run_id"]: row for row in json.loads(capsys.readouterr().out)}
        assert rows["kobbq-failed"]["status"] == "failed" and "went away" in rows["kobbq-failed"]["failure"]

        keeper = RunLeaseKeeper(store, "kobbq-live")
        assert keeper.acquire(heartbeat=False) is None  # this process writes it
        OutputFolder(tmp_path / "live").begin("kobbq-live", "kobbq", store=section)
        policy = tmp_path / "gate.toml"
        policy.write_text(GATE.replace("not_worse_than_baseline_by = 0.02\n", "at_most = 0.5\n"), encoding="utf-8")
        verdict = tmp_path / "verdict.json"
        one_line(capsys, main(["check", str(policy), "--run", str(tmp_path / "live"), "--json", str(verdict)]), 8,
                 "kobbq-live", f"process {os.getpid()}")
        assert not verdict.exists()
        keeper.release()
    finally:
        store.close()


def test_a_baseline_named_by_its_run_id_without_a_store_says_to_give_its_store(team, tmp_path, capsys):
    current, _ = team["current"]
    policy = tmp_path / "gate.toml"
    policy.write_text(GATE, encoding="utf-8")
    one_line(capsys, main(["check", str(policy), "--run", str(current), "--baseline", "kobbq-3f2a9c1e7b44"]), 3,
             "kobbq-3f2a9c1e7b44", "--baseline-store PATH")
