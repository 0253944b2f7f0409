"""Outputs fit a shared machine: files follow the user's umask, bars stay off a redirected stderr."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from culturebias.bootstrap.cli import main

sys.path.insert(0, str(Path(__file__).parent))
from test_bbq_cli import kobbq_replay  # noqa: E402


@pytest.fixture
def umask():
    """Set the process umask for one test (tests run one at a time in a process)."""
    previous = os.umask(0o022)
    os.umask(previous)

    def set_to(mask: int) -> None:
        os.umask(mask)

    yield set_to
    os.umask(previous)


def run_kobbq(tmp_path: Path, out: Path, *assignments: str) -> int:
    answers = kobbq_replay(tmp_path / "answers.jsonl", prompts=("1",), permutations=(0,), limit=3)
    args = ["run", "kobbq", "--out", str(out), "--limit", "3", "--set", "model.backend=replay",
            "--set", f"model.path={answers}", "--set", "protocol.prompts=1", "--set", "protocol.permutations=0",
            "--set", "protocol.statistics=false"]  # fmt: skip
    for assignment in assignments:
        args += ["--set", assignment]
    return main(args)


def modes(folder: Path) -> dict[str, int]:
    return {
        str(path.relative_to(folder)): stat.S_IMODE(path.stat().st_mode)
        for path in folder.rglob("*")
        if path.is_file() and not path.name.startswith(".")  # the folder's own lock and journal
    }


@pytest.mark.parametrize(("mask", "expected"), [(0o002, 0o664), (0o022, 0o644), (0o077, 0o600)])
def test_summary_report_and_sqlite_store_follow_the_umask(mask, expected, umask, tmp_path):
    umask(mask)
    out = tmp_path / "run"
    assert run_kobbq(tmp_path, out) == 0
    found = modes(out)
    assert {"summary.json", "report.md", "results.sqlite"} <= set(found)
    assert any(name.endswith(".png") for name in found)
    assert found == {name: expected for name in found}
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~mask


def test_a_jsonl_store_follows_the_umask(umask, tmp_path):
    umask(0o002)
    out = tmp_path / "run"
    assert run_kobbq(tmp_path, out, "store.backend=jsonl") == 0
    store = {name: mode for name, mode in modes(out).items() if name.startswith("results")}
    assert store and set(store.values()) == {0o664}


def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path, capsys):
    assert run_kobbq(tmp_path, tmp_path / "quiet") == 0  # run.progress=auto, the default
    assert "req/s" not in capsys.readouterr().err
    assert run_kobbq(tmp_path, tmp_path / "asked", "run.progress=always") == 0
    assert "req/s" in capsys.readouterr().err  # asked for: drawn even into a file


def test_runs_lists_an_existing_store_however_it_is_named(tmp_path, capsys):
    out = tmp_path / "run"
    assert run_kobbq(tmp_path, out) == 0
    capsys.readouterr()
    for args in (["--out", str(out)], ["--store", str(out / "results.sqlite")], ["--out", str(out), "--set", "store.backend=sqlite"]):
        assert main(["runs", *args]) == 0, args
        listed = capsys.readouterr().out
        assert listed.startswith("kobbq-") and "\tfinished\t" in listed, args
