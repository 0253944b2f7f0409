"""``culturebias run`` with ``model.backend=openai`` against a loopback server: the API key never
reaches an output, and a server without prompt log-probabilities stops a run before it starts."""

from __future__ import annotations

import json

import pytest

from culturebias.adapters.openai.truth_probe import COUNTING
from culturebias.testing.openai_server import CharacterTokenSource, OpenAITestServer
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
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
            # the scripted model behind the server has no chat template (a base model)
            "--set", "model.chat_template=none",
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
    assert [s.authorization for s in server.requests(probe=True)][-1] == f"Bearer {SECRET}"
    assert f"Bearer {FILE_SECRET}" in {s.authorization for s in server.requests(probe=True)}
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
    assert [s.endpoint for s in server.requests(probe=True)] == ["completions"]  # the probe, nothing else
    # "auto" falls back to answering by generation instead of scoring chance
    assert run(server, tmp_path / "auto") == 0
    summary = json.loads((tmp_path / "auto" / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["mode"] == "generate"


# -- the capability probe under an outage (protocol.mode=auto) -----------------------------------

PROBE_TEXT = COUNTING.text  # only the truth probe's first prompt holds it


def test_auto_mode_rides_out_a_passing_outage_of_the_probe_and_records_the_mode(server, tmp_path):
    server.inject("503", times=5, retry_after="0", when=PROBE_TEXT, probe=True)  # model.max_retries=5: the sixth try answers
    assert run(server, tmp_path / "run") == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["mode"] == "likelihood"


def test_auto_mode_stops_on_a_probe_that_cannot_reach_the_server_instead_of_switching_method(server, tmp_path, capfd):
    server.inject("503", times=8, retry_after="0", when=PROBE_TEXT, probe=True)  # the eight 503s
    assert run(server, tmp_path / "run") == 1
    err = capfd.readouterr().err
    assert "the truth probe could not reach" in err and "giving up after 6 attempts: HTTP 503" in err
    assert "cannot provide" not in err
    assert not (tmp_path / "run" / "summary.json").exists()
    assert {s.endpoint for s in server.requests(probe=True)} == {"completions"}  # nothing was generated instead
    assert all(PROBE_TEXT in s.body["prompt"] for s in server.requests(probe=True))


# -- secrets written into the URL ----------------------------------------------------------------

URL_SECRET = "pw-3e8d1c9b7a6f5e4d"
QUERY_SECRET = "qk-9a8b7c6d5e4f3a2b"


def secret_url(server) -> str:
    return server.api_base.replace("http://", f"http://team:{URL_SECRET}@") + f"?api-key={QUERY_SECRET}&api-version=2024-06-01"


def test_credentials_in_the_api_base_reach_the_server_and_no_output(server, tmp_path, monkeypatch, capfd):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert run(server, tmp_path / "run", "--set", f"model.api_base={secret_url(server)}", "--set", "run.log_format=json") == 0
    served = server.requests()
    assert {s.query for s in served} == {f"api-key={QUERY_SECRET}&api-version=2024-06-01"}
    assert all(s.authorization and s.authorization.startswith("Basic ") for s in served)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    host = server.api_base.removeprefix("http://")
    assert summary["config"]["model"]["api_base"] == f"http://team:**redacted**@{host}?api-key=**redacted**&api-version=2024-06-01"
    assert summary["model"]["scorer"]["description"] == f"served by {server.api_base}"
    for secret in (URL_SECRET, QUERY_SECRET):
        assert files_containing(tmp_path, secret) == []
        captured = capfd.readouterr()
        assert secret not in captured.out + captured.err


def test_a_server_error_echoing_the_credentials_is_redacted_in_the_message_and_the_store(server, tmp_path, capfd):
    server.inject("401", message=f"key {QUERY_SECRET} is not valid for team:{URL_SECRET}", when=PROBE_TEXT, probe=True)
    out = tmp_path / "run"
    assert run(server, out, "--set", f"model.api_base={secret_url(server)}", "--set", "protocol.mode=likelihood") == 1
    err = capfd.readouterr().err
    assert "HTTP 401: key **redacted** is not valid for team:**redacted**" in err
    assert URL_SECRET not in err and QUERY_SECRET not in err
    assert files_containing(tmp_path, URL_SECRET) == [] and files_containing(tmp_path, QUERY_SECRET) == []
    assert (out / "results.sqlite").exists()  # the failed run is recorded, its reason redacted


# -- invalid replies are counted, never answers ---------------------------------------------------


def test_a_question_without_a_valid_reply_is_counted_invalid_and_out_of_choice(server, tmp_path):
    # one request at a time, so both spoiled replies go to the first question whatever the machine does
    server.inject("null-text", times=2, endpoint="completions")
    extra = ("--set", "protocol.mode=generate", "--set", "model.max_retries=1", "--set", "model.max_concurrency=1")
    assert run(server, tmp_path / "run", *extra) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["counts"]["invalid_replies"] == 1
    assert summary["counts"]["out_of_choice"] == 1  # the scripted model answers "A" to everything else
    assert any("got no valid reply from the backend" in note for note in summary["notes"])
    healthy = tmp_path / "healthy"
    assert run(server, healthy, *extra) == 0  # nothing invalid was cached: asked again, answered
    assert json.loads((healthy / "summary.json").read_text(encoding="utf-8"))["counts"]["invalid_replies"] == 0
