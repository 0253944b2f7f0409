"""``culturebias run`` with ``model.backend=openai`` against a loopback server: the API key never
reaches an output, and a server without prompt log-probabilities stops a run before it starts."""

from __future__ import annotations

import json

import pytest

from culturebias.testing.openai_server import CharacterTokenSource, OpenAITestServer
from culturebias.adapters.scripted.backend import ScriptedGenerator, ScriptedScorer
from culturebias.bootstrap.cli import main

SECRET = "sk-live-7c1d0e9f3b2a4c5d"
FILE_SECRET = "sk-file-0a9b8c7d6e5f4a3b"


@pytest.fixture(autouse=True)
def _restore_logging():
    yield
    import structlog

    structlog.reset_defaults()


@pytest.fixture
def server():
    scorer = ScriptedScorer(lambda context, char: -0.1 * (1 + ord(char) % 5))
    generator = ScriptedGenerator(lambda request, prompt: "A")
    with OpenAITestServer("served-model", CharacterTokenSource(scorer), generator) as running:
        yield running


def run(server, out, *extra: str) -> int:
    return main(
        [
            "run", "kobbq", "--out", str(out),
            "--set", "model.backend=openai", "--set", f"model.api_base={server.api_base}",
            "--set", "model.path=served-model", "--set", "run.progress=false",
            "--set", f"run.cache_dir={out.parent / 'cache'}", "--set", "protocol.limit=2",
            "--set", "protocol.prompts=1", "--set", "protocol.statistics=false",
            *extra,
        ]
    )  # fmt: skip


def files_containing(root, secret: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


@pytest.mark.parametrize("mode", ["likelihood", "generate"])
def test_the_api_key_reaches_the_server_and_no_output(server, tmp_path, monkeypatch, capfd, mode):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert run(server, tmp_path / "run", "--set", f"protocol.mode={mode}", "--set", "run.log_format=json") == 0
    assert {s.authorization for s in server.requests()} == {f"Bearer {SECRET}"}
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["mode"] == mode
    assert summary["config"]["model"]["api_key_env"] == "OPENAI_API_KEY"
    assert files_containing(tmp_path, SECRET) == []
    captured = capfd.readouterr()
    assert SECRET not in captured.out + captured.err
    assert "summary:" in captured.out


def test_a_key_from_a_secrets_file_or_the_command_line_is_never_written(server, tmp_path, monkeypatch, capfd):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    key_file = tmp_path / "secrets" / "key"
    key_file.parent.mkdir()
    key_file.write_text(FILE_SECRET, encoding="utf-8")
    assert run(server, tmp_path / "file", "--set", f"model.api_key_file={key_file}") == 0
    assert run(server, tmp_path / "inline", "--set", f"model.api_key={SECRET}") == 0
    assert [s.authorization for s in server.requests()][-1] == f"Bearer {SECRET}"
    assert f"Bearer {FILE_SECRET}" in {s.authorization for s in server.requests()}
    inline = json.loads((tmp_path / "inline" / "summary.json").read_text(encoding="utf-8"))
    assert inline["config"]["model"]["api_key"] == "**redacted**"
    outputs = [tmp_path / "file", tmp_path / "inline", tmp_path / "cache"]
    assert [f for root in outputs for secret in (SECRET, FILE_SECRET) for f in files_containing(root, secret)] == []
    captured = capfd.readouterr()
    assert SECRET not in captured.out + captured.err and FILE_SECRET not in captured.out + captured.err


def test_without_prompt_logprobs_likelihood_runs_stop_before_scoring(server, tmp_path, capfd):
    server.state.prompt_logprobs = False
    assert run(server, tmp_path / "run", "--set", "protocol.mode=likelihood") == 4  # a capability is missing
    err = capfd.readouterr().err
    assert "cannot provide continuation log-likelihood" in err and "prompt log-probabilities" in err
    assert not (tmp_path / "run" / "summary.json").exists()
    assert [s.endpoint for s in server.requests()] == ["completions"]  # the probe, nothing else
    # "auto" falls back to answering by generation instead of scoring chance
    assert run(server, tmp_path / "auto") == 0
    summary = json.loads((tmp_path / "auto" / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["mode"] == "generate"
