"""``--resume`` resumes your own run: two processes sharing one store (a SQLite file, a PostgreSQL server).

Run A of a job is SIGKILLed part-way in folder ``a``; run B of the same job,
started later in folder ``b``, is alive and waiting on the model server. Before
leases, A's ``--resume`` attached to B's live run (the newest unfinished run of
the job, store-wide), wrote it, and left A's own run ``running`` for ever. Now
it continues A's run (the one its folder recorded); a ``--resume`` in a third
folder starts afresh rather than write B's run; ``culturebias runs`` shows B's
holder; a run left ``running`` by a process that is gone is marked interrupted
by a command and resumed.

The model is a loopback OpenAI-compatible server in this process; a request
that ``hang``s keeps a run alive for as long as the test needs, with no timing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
from culturebias.bootstrap.cli import main
from culturebias.testing.openai_server import CharacterTokenSource, OpenAITestServer
from culturebias.testing.postgres_server import postgres_server, postgres_store_settings  # noqa: F401  (fixtures)

WAIT_S = 180  # a bound on waiting for a subprocess on a loaded machine, never a timing assumption


@pytest.fixture
def server():
    generator = ScriptedGenerator(lambda request, prompt: "A")
    with OpenAITestServer("served-model", CharacterTokenSource(ScriptedScorer(lambda c, x: -1.0)), generator) as running:
        yield running


@pytest.fixture(params=["sqlite", "postgres"])
def store_arguments(request, tmp_path) -> list[str]:
    if request.param == "sqlite":
        sets = [f"store.path={tmp_path / 'shared.sqlite'}"]  # one file for every folder
    else:
        settings = request.getfixturevalue("postgres_store_settings")
        sets = ["store.backend=postgres", f"store.dsn={settings.dsn}", f"store.password_file={settings.password_file}"]
    return [part for assignment in sets for part in ("--set", assignment)]


def run_arguments(server, tmp_path: Path, folder: str, store: list[str], *extra: str) -> list[str]:
    sets = [
        "model.backend=openai", f"model.api_base={server.api_base}", "model.path=served-model", "model.chat_template=none",
        "model.max_concurrency=1", "model.cache=off", f"run.cache_dir={tmp_path / 'cache'}", "run.progress=false",
        "run.chunk_size=2", "protocol.mode=generate", "protocol.limit=3", "protocol.prompts=1", "protocol.statistics=false",
    ]
    return ["run", "kobbq", "--out", str(tmp_path / folder), *(p for s in sets for p in ("--set", s)), *store, *extra]


def start(arguments: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "culturebias.bootstrap.cli", *arguments], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def hung_on_third_request(server, process: subprocess.Popen, since: int) -> None:
    """Wait until the process's third model request hangs (two results stored before it)."""
    deadline = time.monotonic() + WAIT_S
    while not any(s.fault == "hang" for s in server.requests()[since:]):
        assert process.poll() is None, process.communicate()[0]
        assert time.monotonic() < deadline, "the run never reached its third request"
        time.sleep(0.05)
    server.clear_every()


def folder_run(tmp_path: Path, folder: str) -> str:
    return json.loads((tmp_path / folder / ".culturebias-outputs.json").read_text(encoding="utf-8"))["run_id"]


def listed(capsys, store: list[str]) -> dict[str, dict]:
    capsys.readouterr()
    assert main(["runs", "--format", "json", *store]) == 0
    return {row["run_id"]: row for row in json.loads(capsys.readouterr().out)}


def stored_count(capsys, store: list[str], run_id: str) -> int:
    row = listed(capsys, store)[run_id]
    return sum(p["done"] for p in row["progress"].values())


def test_resume_continues_its_own_run_never_a_live_one_and_a_left_run_is_marked_and_resumed(server, tmp_path, store_arguments, capsys):
    store = store_arguments
    # A: killed while it waits on its third request
    server.inject_every("hang", 3)
    a = start(run_arguments(server, tmp_path, "a", store))
    hung_on_third_request(server, a, 0)
    os.kill(a.pid, signal.SIGKILL)
    a.wait()
    run_a = folder_run(tmp_path, "a")

    # B: the same job in another folder, alive, waiting on its third request
    since = len(server.requests())
    server.inject_every("hang", 3)
    b = start(run_arguments(server, tmp_path, "b", store))
    try:
        hung_on_third_request(server, b, since)
        run_b = folder_run(tmp_path, "b")
        assert run_b != run_a
        rows = listed(capsys, store)
        assert rows[run_b]["holder"]["pid"] == b.pid and rows[run_b]["holder_live"] is True, "runs shows the holder"
        assert rows[run_a]["holder"]["pid"] == a.pid and rows[run_a]["holder_live"] is False, "A's process is gone"
        held_by_b = stored_count(capsys, store, run_b)

        # A's --resume continues A's own run, not B's newer live one
        assert main(run_arguments(server, tmp_path, "a", store, "--resume")) == 0
        summary = json.loads((tmp_path / "a" / "summary.json").read_text(encoding="utf-8"))
        assert summary["run_id"] == run_a
        rows = listed(capsys, store)
        assert rows[run_a]["status"] == "finished" and rows[run_b]["status"] == "running"
        assert stored_count(capsys, store, run_b) == held_by_b, "nothing was written into B's run"

        # a --resume with no run of its own never attaches to B's live run: a run of its own starts
        assert main(run_arguments(server, tmp_path, "c", store, "--resume")) == 0
        run_c = json.loads((tmp_path / "c" / "summary.json").read_text(encoding="utf-8"))["run_id"]
        assert run_c not in (run_a, run_b) and stored_count(capsys, store, run_b) == held_by_b

        # B is alive: it is not marked interrupted
        assert main(["runs", "--mark-interrupted", run_b, *store]) == 8
        assert f"process {b.pid}" in capsys.readouterr().err
    finally:
        b.kill()
        b.wait()

    # B's process is gone: its run, left running, is marked interrupted by command, then resumed in its folder
    assert listed(capsys, store)[run_b]["status"] == "running"
    assert main(["runs", "--mark-interrupted", run_b, *store]) == 0
    row = listed(capsys, store)[run_b]
    assert row["status"] == "interrupted" and "left running" in row["failure"] and row["holder"] is None
    assert main(run_arguments(server, tmp_path, "b", store, "--resume")) == 0
    assert json.loads((tmp_path / "b" / "summary.json").read_text(encoding="utf-8"))["run_id"] == run_b
    assert {r["status"] for r in listed(capsys, store).values()} == {"finished"}
