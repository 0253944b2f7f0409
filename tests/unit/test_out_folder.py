"""The output folder: one run at a time, no stale or temporary file outlives the next run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from culturebias.testing.scripted import ScriptedScorer
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.application import run_benchmark as orchestration
from culturebias.application.out_folder import JOURNAL_FILE, LOCK_FILE, FolderLock
from culturebias.application.run_benchmark import run_benchmark
from culturebias.application.run_benchmark import RunRequest
from culturebias.domain.requests import LoglikelihoodRequest
from culturebias.domain.runs import OutputFolderBusyError
from culturebias.domain.summary import Block, ProtocolOutcome, RunSummary
from culturebias.testing.context import InMemorySource, fake_context

ROWS = ["a", "bb", "ccc"]


def rule(context: str, continuation: str) -> float:
    return -float(len(continuation))


class Counts(Block):
    n: int


class Empty(Block):
    pass


class ToySummary(RunSummary):
    metrics: Counts
    counts: Counts
    details: Empty


class CountService:
    def preflight(self, ctx):
        return None

    def run(self, ctx, dataset, plan):
        results = ctx.scorer().loglikelihood([LoglikelihoodRequest("", s) for s in dataset])
        return ProtocolOutcome(metrics=Counts(n=len(results)), counts=Counts(n=len(results)), details=Empty())


def run(tmp_path: Path, rows=ROWS, scorer=None, resume: bool = False):
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    request = RunRequest(
        benchmark="toy",
        service=CountService(),
        summary_model=ToySummary,
        source=InMemorySource(rows),
        store=store,
        report=None,
        out_dir=tmp_path / "out",
        config={},
        config_fingerprint="c",
        headlines=(),
        resume=resume,
    )
    scorer = scorer or ScriptedScorer(rule)
    return run_benchmark(request, lambda run_id: fake_context(scorer=scorer, store=store, run_id=run_id))


def out(tmp_path: Path) -> Path:
    return tmp_path / "out"


def test_a_second_process_in_the_folder_gets_an_error_naming_the_first(tmp_path):
    holder = FolderLock(out(tmp_path))
    holder.acquire()
    holder.describe(run_id="toy-first")
    try:
        with pytest.raises(OutputFolderBusyError) as busy:
            run(tmp_path)
        message = str(busy.value)
        assert f"process {os.getpid()}" in message and "toy-first" in message and str(out(tmp_path)) in message
        assert busy.value.holder["pid"] == os.getpid()
    finally:
        holder.release()
    assert run(tmp_path).summary_path.is_file(), "once the first is done the folder is free"
    assert not (out(tmp_path) / LOCK_FILE).exists(), "the lock goes with its run"


HOLDER = """
import sys
from pathlib import Path
from culturebias.application.out_folder import FolderLock
lock = FolderLock(Path(sys.argv[1]))
lock.acquire()
print("locked", flush=True)
sys.stdin.read()
"""


def test_the_lock_of_a_killed_process_is_taken_over(tmp_path):
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out(tmp_path))], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline().strip() == "locked"
        with pytest.raises(OutputFolderBusyError, match=f"process {child.pid}"):
            run(tmp_path)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    stale = json.loads((out(tmp_path) / LOCK_FILE).read_text())
    assert stale["pid"] == child.pid, "the dead process's lock file is still there"
    result = run(tmp_path)
    assert result.summary_path.is_file()


def test_leftover_temporary_files_are_removed_by_the_next_run(tmp_path):
    folder = out(tmp_path)
    folder.mkdir(parents=True)
    for name in (".summary.json.k2j3h4", ".summary.json.abc.partial", ".report.md.x1.partial", f".{JOURNAL_FILE}.q.partial"):
        (folder / name).write_text("{half", encoding="utf-8")
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    run(tmp_path)
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == [JOURNAL_FILE]
    assert (folder / "notes.txt").read_text(encoding="utf-8") == "mine", "the user's own files are left alone"


def test_a_failed_rerun_leaves_no_summary_that_looks_current(tmp_path):
    first = run(tmp_path)
    (out(tmp_path) / "report.md").write_text("# first", encoding="utf-8")
    orchestration.OutputFolder(out(tmp_path)).written(first.run_id, "toy", [first.summary_path, out(tmp_path) / "report.md"])

    class Boom(ScriptedScorer):
        def loglikelihood(self, requests, progress=None):
            raise RuntimeError("model exploded")

    with pytest.raises(RuntimeError):
        run(tmp_path, scorer=Boom(rule))
    assert not (out(tmp_path) / "summary.json").exists() and not (out(tmp_path) / "report.md").exists()
    kept = out(tmp_path) / "previous" / first.run_id
    assert json.loads((kept / "summary.json").read_text())["run_id"] == first.run_id
    assert (kept / "report.md").read_text(encoding="utf-8") == "# first"

    third = run(tmp_path)
    assert json.loads((out(tmp_path) / "summary.json").read_text())["run_id"] == third.run_id
    assert (kept / "summary.json").is_file(), "earlier results stay beside the new ones"


def test_a_folder_written_before_the_journal_existed_is_set_aside_too(tmp_path):
    folder = out(tmp_path)
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps({"run_id": "toy-old"}), encoding="utf-8")
    (folder / "report.md").write_text("old", encoding="utf-8")
    result = run(tmp_path)
    assert json.loads((folder / "summary.json").read_text())["run_id"] == result.run_id
    assert (folder / "previous" / "toy-old" / "report.md").read_text(encoding="utf-8") == "old"


@pytest.mark.parametrize("resume", [False, True])
def test_a_kill_between_finishing_in_the_store_and_writing_the_files_is_repaired(tmp_path, monkeypatch, resume):
    original = orchestration.write_text_atomically

    def killed(path, text):
        if path.name == "summary.json":
            raise KeyboardInterrupt("killed while writing summary.json")
        original(path, text)

    monkeypatch.setattr(orchestration, "write_text_atomically", killed)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path)
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    [finished] = store.find_runs("toy")
    assert finished.status == "finished", "the store is written first"
    assert not (out(tmp_path) / "summary.json").exists()

    monkeypatch.setattr(orchestration, "write_text_atomically", original)
    scorer = ScriptedScorer(rule)
    result = run(tmp_path, scorer=scorer, resume=resume)
    if resume:  # --resume: the finished run's files, written from the store; nothing is scored again
        assert result.run_id == finished.run_id and scorer.calls == []
        assert [m.run_id for m in store.find_runs("toy")] == [finished.run_id], "no new run"
        written = json.loads((out(tmp_path) / "summary.json").read_text())
        assert written == store.load_summary(finished.run_id) and result.summary.as_dict() == written
        assert json.loads((out(tmp_path) / JOURNAL_FILE).read_text())["state"] == "written"
        return
    repaired = out(tmp_path) / "previous" / finished.run_id / "summary.json"
    assert json.loads(repaired.read_text())["run_id"] == finished.run_id, "the finished run's summary is written"
    assert json.loads(repaired.read_text())["metrics"] == store.load_summary(finished.run_id)["metrics"]
    assert json.loads((out(tmp_path) / "summary.json").read_text())["run_id"] == result.run_id


def test_the_command_line_exits_8_naming_the_process_that_holds_the_folder(tmp_path, capsys):
    import structlog

    from culturebias.bootstrap.cli import main

    answers = tmp_path / "answers.jsonl"
    answers.write_text("", encoding="utf-8")
    holder = FolderLock(out(tmp_path))
    holder.acquire()
    try:
        command = ["run", "kobbq", "--out", str(out(tmp_path)), "--set", "model.backend=replay", "--set", f"model.path={answers}"]
        assert main([*command, "--set", "run.progress=false"]) == 8
    finally:
        holder.release()
        structlog.reset_defaults()
    error = capsys.readouterr().err
    assert f"is in use by process {os.getpid()}" in error and error.count("\n") == 1
