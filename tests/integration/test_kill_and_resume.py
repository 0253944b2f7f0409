"""Real kills of `culturebias run` (SIGKILL, SIGTERM) on a tiny model, then `--resume`.

The child process stops itself at a chosen batch (it blocks before that batch's
forward pass and says so on stdout), the test kills it there, checks what the
store holds, and resumes in this process. No sleep, no timing: the kill point
is a batch number. The resumed run's metrics and stored scores must be
byte-identical to those of an uninterrupted run.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from culturebias.adapters.stores.sqlite_store import SQLiteResultStore  # noqa: E402
from culturebias.bootstrap.cli import main  # noqa: E402

CHILD = """
import sys
from culturebias.adapters.hf.scorer import HFScorer

stop_at = int(sys.argv[1])
calls = [0]
forward = HFScorer._score


def score(self, *args, **kwargs):
    calls[0] += 1
    if calls[0] == stop_at:
        print("stopped before batch", stop_at, flush=True)
        sys.stdin.read()  # until the test kills this process
    return forward(self, *args, **kwargs)


HFScorer._score = score
from culturebias.bootstrap.cli import main

sys.exit(main(sys.argv[2:]))
"""


@pytest.fixture(autouse=True)
def _restore_logging():
    yield
    import structlog

    structlog.reset_defaults()


@pytest.fixture(scope="module")
def tiny_model() -> Path:
    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    return cached_tiny_causal_lm()


def args(out: Path, model: Path, *extra: str, commit_seconds: str = "0") -> list[str]:
    return [
        "run", "kobbq", "--out", str(out),
        "--set", "model.backend=hf",
        "--set", f"model.path={model}",
        "--set", "model.device=cpu",
        "--set", "model.batch_size=2",
        "--set", "protocol.mode=likelihood",
        "--set", "protocol.prompts=1",
        "--set", "protocol.limit=8",
        "--set", "run.progress=false",
        "--set", "run.report=none",
        "--set", "run.chunk_size=24",
        "--set", f"run.commit_seconds={commit_seconds}",
        "--set", f"run.cache_dir={out.parent / 'cache'}",
        *extra,
    ]  # fmt: skip


def scores(out: Path) -> dict[str, tuple]:
    with sqlite3.connect(out / "results.sqlite") as db:
        rows = db.execute("SELECT key, payload FROM results WHERE stage = 'loglikelihood'").fetchall()
    return {key: tuple(json.loads(payload)[k] for k in ("logprob", "n_tokens", "is_greedy")) for key, payload in rows}


def metrics_text(out: Path) -> str:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return json.dumps(summary["metrics"], sort_keys=True)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, tiny_model) -> Path:
    out = tmp_path_factory.mktemp("uninterrupted") / "run"
    assert main(args(out, tiny_model)) == 0
    return out


@pytest.mark.parametrize(
    ("kill", "stop_at", "commit_seconds", "exit_code", "status"),
    [
        (signal.SIGKILL, 3, "0", -signal.SIGKILL, "running"),  # within the first chunk
        (signal.SIGKILL, 7, "0", -signal.SIGKILL, "running"),  # within the second
        # commit_seconds=3600: what is stored was committed by share (2 % of a short run's results is one, so
        # every batch); the flush of results still waiting is tested in tests/unit/test_run_orchestration.py
        (signal.SIGTERM, 3, "3600", 143, "interrupted"),
    ],
    ids=["sigkill-chunk1", "sigkill-chunk2", "sigterm-flush"],
)
def test_a_killed_run_resumes_to_byte_identical_numbers(
    tmp_path, tiny_model, uninterrupted, capsys, kill, stop_at, commit_seconds, exit_code, status
):
    out = tmp_path / "run"
    command = args(out, tiny_model, commit_seconds=commit_seconds)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(stop_at), *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = []
        for line in child.stdout:
            lines.append(line)
            if line.startswith("stopped before batch"):
                break
        else:
            pytest.fail("the run ended before the kill point:\n" + "".join(lines[-30:]))
        before = len(scores(out))
        child.send_signal(kill)
        output = child.communicate()[0]
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == exit_code, output

    store = SQLiteResultStore(out / "results.sqlite")
    [run] = store.find_runs("kobbq")
    stored = len(store.load_results(run.run_id, "loglikelihood"))
    assert run.status == status
    assert stored > 0 and run.progress["loglikelihood"].done == stored, "the store says how far the run got"
    assert stored == before, "every delivered batch was committed (run.commit_seconds=0, or 2 % of the results)"
    if kill == signal.SIGTERM:
        assert "SIGTERM" in (run.failure or "")
    store.close()
    assert not (out / "summary.json").exists()
    assert main(["runs", "--out", str(out)]) == 0
    listed = capsys.readouterr().out
    assert f"{run.run_id}\t{status}" in listed and f"loglikelihood {stored}/" in listed

    assert main([*command, "--resume"]) == 0
    assert metrics_text(out) == metrics_text(uninterrupted)
    assert scores(out) == scores(uninterrupted)
    resumed = SQLiteResultStore(out / "results.sqlite")
    [run_after] = resumed.find_runs("kobbq")
    assert run_after.run_id == run.run_id and run_after.status == "finished"
    total = run_after.progress["loglikelihood"]
    assert total.done == total.total == len(scores(uninterrupted))
    resumed.close()


def test_resume_refuses_changed_weights_batching_or_chunking_and_names_what_changed(tmp_path, tiny_model, monkeypatch, capsys):
    import shutil

    from culturebias.adapters.hf.scorer import HFScorer

    model = tmp_path / "model"
    shutil.copytree(tiny_model, model)
    out = tmp_path / "run"
    original = HFScorer.loglikelihood
    calls = {"left": 1}

    def interrupted(self, requests, progress=None):
        if calls["left"] == 0:
            raise KeyboardInterrupt
        calls["left"] -= 1
        return original(self, requests, progress)

    monkeypatch.setattr(HFScorer, "loglikelihood", interrupted)
    assert main(args(out, model)) == 130
    monkeypatch.setattr(HFScorer, "loglikelihood", original)
    capsys.readouterr()

    weights = model / "model.safetensors"
    intact = weights.read_bytes()
    weights.write_bytes(intact[:-1] + bytes([intact[-1] ^ 1]))  # the same folder, other weights
    assert main([*args(out, model), "--resume"]) == 6
    assert "model_weights.model.safetensors" in capsys.readouterr().err
    weights.write_bytes(intact)

    for setting, named in (("run.chunk_size=12", "run.chunk_size: 24 -> 12"), ("model.batch_size=4", "model.batch_size: 2 -> 4")):
        assert main([*args(out, model), "--set", setting, "--resume"]) == 6
        error = capsys.readouterr().err
        assert named in error and error.count("->") == 1, error

    assert main([*args(out, model), "--resume"]) == 0
    [run] = SQLiteResultStore(out / "results.sqlite").find_runs("kobbq")
    assert run.status == "finished"
