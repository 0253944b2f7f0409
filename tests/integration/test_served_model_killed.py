"""A served model that goes away mid-run: the run is marked ``failed`` with the reason, never left ``running``.

The model server is a process of its own (``culturebias.testing.openai_server_process``); once the run has had a
few replies every request hangs, and the server is SIGKILLed while the run waits on one. The run's store (a
shared SQLite file outside the run folder) and the folder's journal say ``failed`` and why; ``culturebias runs``
lists it so; ``--resume`` against a restarted server completes it with the numbers of an uninterrupted run; and
the run folder is read back through the store its summary.json names (``export`` with no ``--store``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from culturebias.bootstrap.cli import main
from culturebias.testing.served_process import ServedProcess, free_port

WAIT_S = 180  # a bound on waiting for a subprocess on a loaded machine, never a timing assumption
JOURNAL = ".culturebias-outputs.json"


def serve(port: int, log: Path, *extra: str) -> ServedProcess:
    command = [sys.executable, "-m", "culturebias.testing.openai_server_process", "--port", str(port), *extra]
    return ServedProcess(command, f"http://127.0.0.1:{port}/v1", log, start_s=WAIT_S)


def run_arguments(port: int, tmp_path: Path, folder: str, *extra: str) -> list[str]:
    sets = [
        "model.backend=openai", f"model.api_base=http://127.0.0.1:{port}/v1", "model.path=served-model",
        "model.chat_template=none", "model.max_concurrency=1", "model.cache=off", "model.timeout_s=600",
        f"run.cache_dir={tmp_path / 'cache'}", "run.progress=false", "run.chunk_size=2", "protocol.mode=generate",
        "protocol.limit=4", "protocol.prompts=1", "protocol.statistics=false", f"store.path={tmp_path / 'team.sqlite'}",
    ]
    return ["run", "kobbq", "--out", str(tmp_path / folder), *(p for s in sets for p in ("--set", s)), *extra]


def wait_for_hang(log: Path, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + WAIT_S
    while " hang" not in log.read_text(encoding="utf-8", errors="replace"):
        assert process.poll() is None, process.communicate()[0]
        assert time.monotonic() < deadline, "the run never reached a hanging request"
        time.sleep(0.05)


def listed(capsys, store: Path) -> dict[str, dict]:
    capsys.readouterr()
    assert main(["runs", "--store", str(store), "--format", "json"]) == 0
    return {row["run_id"]: row for row in json.loads(capsys.readouterr().out)}


def test_a_served_model_killed_mid_run_leaves_a_failed_run_that_resume_completes(tmp_path, capsys):
    port = free_port()
    server = serve(port, tmp_path / "server.log", "--hang-after", "3")
    try:
        run = subprocess.Popen(
            [sys.executable, "-m", "culturebias.bootstrap.cli", *run_arguments(port, tmp_path, "a")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        wait_for_hang(tmp_path / "server.log", run)
        os.kill(server._process.pid, signal.SIGKILL)  # the server goes away for good while the run waits on it
        output = run.communicate(timeout=WAIT_S)[0]
    finally:
        server.stop()
    assert run.returncode not in (0, None), output
    assert "Traceback" not in output and "culturebias: error:" in output

    journal = json.loads((tmp_path / "a" / JOURNAL).read_text(encoding="utf-8"))
    assert journal["state"] == "failed" and journal["reason"], journal
    assert not (tmp_path / "a" / "summary.json").exists()
    row = listed(capsys, tmp_path / "team.sqlite")[journal["run_id"]]
    assert row["status"] == "failed"
    assert row["failure"] == journal["reason"]
    assert "127.0.0.1" in row["failure"] or "connection" in row["failure"].lower(), row["failure"]
    # the folder has no summary to name its store: its journal recorded it when the run started
    assert journal["store"]["path"] == str(tmp_path / "team.sqlite")
    capsys.readouterr()
    assert main(["runs", "--out", str(tmp_path / "a"), "--format", "json"]) == 0
    assert {r["run_id"]: r["status"] for r in json.loads(capsys.readouterr().out)}[journal["run_id"]] == "failed"

    server = serve(port, tmp_path / "server-again.log")
    try:
        assert main(run_arguments(port, tmp_path, "a", "--resume")) == 0
        assert main(run_arguments(port, tmp_path, "whole")) == 0  # the same job, never interrupted
    finally:
        server.stop()
    resumed = json.loads((tmp_path / "a" / "summary.json").read_text(encoding="utf-8"))
    whole = json.loads((tmp_path / "whole" / "summary.json").read_text(encoding="utf-8"))
    assert resumed["run_id"] == journal["run_id"] != whole["run_id"]
    assert resumed["metrics"] == whole["metrics"] and resumed["counts"] == whole["counts"]
    assert json.loads((tmp_path / "a" / JOURNAL).read_text(encoding="utf-8"))["state"] == "written"
    assert listed(capsys, tmp_path / "team.sqlite")[journal["run_id"]]["status"] == "finished"

    # the folder holds no store: its records are read through the store its summary.json names
    assert not (tmp_path / "a" / "results.sqlite").exists()
    out = tmp_path / "items.jsonl"
    assert main(["export", str(tmp_path / "a"), "--format", "jsonl", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows and {r["run_id"] for r in rows} == {journal["run_id"]}


def test_a_run_stopped_by_sigterm_while_a_stuck_server_holds_its_request_stops_now_and_is_interrupted(tmp_path, capsys):
    port = free_port()
    server = serve(port, tmp_path / "server.log", "--hang-after", "3")
    try:
        run = subprocess.Popen(  # model.timeout_s=600: without stopping at once it would wait that long
            [sys.executable, "-m", "culturebias.bootstrap.cli", *run_arguments(port, tmp_path, "a")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        wait_for_hang(tmp_path / "server.log", run)
        run.send_signal(signal.SIGTERM)  # the server stays up, holding the request
        output = run.communicate(timeout=120)[0]
    finally:
        server.stop()
    assert run.returncode == 128 + signal.SIGTERM, output
    assert "Traceback" not in output and "interrupted (SIGTERM)" in output
    journal = json.loads((tmp_path / "a" / JOURNAL).read_text(encoding="utf-8"))
    assert journal["state"] == "interrupted"
    capsys.readouterr()
    assert main(["runs", "--out", str(tmp_path / "a"), "--format", "json"]) == 0  # its journal names the store
    assert {r["run_id"]: r["status"] for r in json.loads(capsys.readouterr().out)}[journal["run_id"]] == "interrupted"
