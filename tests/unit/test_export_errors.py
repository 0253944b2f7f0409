"""``export`` and the governance formats never print a traceback (issue 37 point 2): a tracking store MLflow
refuses, a missing extra, an unreachable server, a folder that cannot be written each give one line and the
exit code ``bootstrap/cli.py`` documents."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.bootstrap.cli import exit_code, main
from culturebias.testing.kobbq_runs import kobbq_run


@pytest.fixture(autouse=True)
def _restore_logging():
    yield
    import structlog

    structlog.reset_defaults()


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("export-errors") / "run"
    folder.mkdir()
    store = SQLiteResultStore(folder / "results.sqlite")
    try:
        kobbq_run("biased", name="biased", out_dir=folder, store=store, options={"limit": 12})
    finally:
        store.close()
    return folder


def one_line(code: int, expected: int, err: str, *fragments: str) -> None:
    assert code == expected, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, err


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    ("uri", "code", "fragments"),
    [
        ("file:{tmp}/mlruns", 2, ("refuses the file tracking store", "sqlite:///mlflow.db", "http://HOST:PORT")),
        ("{tmp}/mlruns", 2, ("refuses the file tracking store", "sqlite:///mlflow.db")),
        ("bogus://nowhere", 2, ("refuses the tracking store 'bogus://nowhere'", "sqlite:///mlflow.db")),
        ("sqlite:////proc/culturebias-test/mlflow.db", 2, ("cannot be opened", "sqlite:///mlflow.db")),
        ("http://127.0.0.1:{port}", 1, ("cannot be reached", "is it running?")),
    ],
    ids=["file-uri", "bare-path", "unknown-scheme", "sqlite-unwritable-folder", "unreachable-server"],
)
def test_a_tracking_store_mlflow_refuses_or_cannot_reach_is_one_line(run, uri, code, fragments, tmp_path, monkeypatch, capsys, costly):
    pytest.importorskip("mlflow", reason="the governance extra (mlflow) is not installed")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")  # a refused connection fails at once
    monkeypatch.chdir(tmp_path)
    target = uri.format(tmp=tmp_path, port=free_port())
    got = main(["export", str(run), "--format", "mlflow", "--tracking-uri", target])
    one_line(got, code, capsys.readouterr().err, *fragments)
    assert not (tmp_path / "mlruns").exists()


def test_a_tracking_server_that_refuses_connections_is_one_line_at_once_without_mlflows_retries(run, tmp_path, monkeypatch, capsys, costly):
    pytest.importorskip("mlflow", reason="the governance extra (mlflow) is not installed")
    for variable in ("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(variable, raising=False)  # MLflow's own retries (7, minutes of backoff) as a user has them
    monkeypatch.chdir(tmp_path)
    import mlflow.utils.rest_utils as rest_utils

    asked: list[object] = []
    real_request = rest_utils.http_request
    # MLflow alone retries for about four minutes: the refused connection must stop the export before MLflow's
    # first request (counted here), not after its retries; no wall-clock bound, which a loaded machine could break
    monkeypatch.setattr(rest_utils, "http_request", lambda *a, **k: asked.append(a) or real_request(*a, **k))
    got = main(["export", str(run), "--format", "mlflow", "--tracking-uri", f"http://127.0.0.1:{free_port()}"])
    one_line(got, 1, capsys.readouterr().err, "cannot be reached", "is it running?", "127.0.0.1")
    assert asked == []


@pytest.mark.parametrize(("format", "module"), [("mlflow", "mlflow"), ("model-card", "huggingface_hub"), ("parquet", "pyarrow")])
def test_a_missing_extra_is_one_line_naming_the_pip_command(run, format, module, tmp_path, monkeypatch, capsys):
    import builtins
    import importlib.util

    real_import, real_find = builtins.__import__, importlib.util.find_spec

    def without(name, *args, **kwargs):  # the extra is not installed: neither found nor importable
        if name == module or name.startswith(module + "."):
            raise ImportError(f"No module named {module!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None if name == module else real_find(name, *rest))
    monkeypatch.setattr(builtins, "__import__", without)
    got = main(["export", str(run), "--format", format, "--out", str(tmp_path / "out.x")])
    one_line(got, 2, capsys.readouterr().err, module, "pip install -e '.[")
    assert not (tmp_path / "out.x").exists()


@pytest.mark.parametrize(("format", "module"), [("mlflow", "mlflow"), ("model-card", "huggingface_hub")])
def test_an_extra_installed_but_failing_to_import_is_one_line_not_a_traceback(run, format, module, tmp_path, costly):
    import subprocess
    import sys

    shim = tmp_path / "shim" / module  # found on the path, but its import fails (a broken or partial install)
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(f"raise ImportError('cannot import name x from {module} dependency')\n", encoding="utf-8")
    paths = [str(tmp_path / "shim"), *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
    out = tmp_path / "out.x"
    done = subprocess.run(
        [sys.executable, "-m", "culturebias.bootstrap.cli", "export", str(run), "--format", format,
         "--out", str(out), "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)}, timeout=300,
    )
    one_line(done.returncode, 2, done.stderr, module, "installed but cannot be imported", "pip install -e '.[governance]'")
    assert not out.exists() and not (tmp_path / "mlflow.db").exists()


@pytest.mark.parametrize("format", ["model-card", "every-eval-ever", "csv", "parquet", "jsonl"])
def test_a_folder_the_system_refuses_is_one_line_and_exit_code_1(run, format, capsys):
    pytest.importorskip("huggingface_hub")
    pytest.importorskip("pyarrow")
    got = main(["export", str(run), "--format", format, "--out", "/proc/culturebias-test/export.out"])  # refused even to root
    one_line(got, 1, capsys.readouterr().err, "/proc/culturebias-test")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
@pytest.mark.parametrize("format", ["model-card", "every-eval-ever", "parquet"])
def test_a_read_only_folder_is_one_line(run, format, tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    got = main(["export", str(run), "--format", format, "--out", str(locked / "export.out")])
    one_line(got, 1, capsys.readouterr().err, str(locked))
    assert list(locked.iterdir()) == []


def test_the_typed_errors_have_their_documented_exit_codes():
    from culturebias.errors import TrackingServerError, TrackingStoreError

    assert exit_code(TrackingStoreError("x")) == 2 and exit_code(TrackingServerError("x")) == 1
