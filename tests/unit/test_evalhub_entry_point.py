"""``culturebias-evalhub`` (``evalhub_main``), the eval-hub job pod's entry point: a served model's job reported, and
each way it fails as one line on stderr with the ``culturebias`` command's exit code."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("evalhub", reason="the evalhub extra (eval-hub-sdk) is not installed: pip install -e '.[evalhub]' in the clone")

from evalhub.adapter import DefaultCallbacks, JobCallbacks, JobResults, JobSpec, JobStatus  # noqa: E402

from culturebias.adapters.governance.evalhub_adapter import CultureBiasAdapter, job_adapter  # noqa: E402
from culturebias.bootstrap.governance import evalhub_main  # noqa: E402
from culturebias.domain.errors import ConfigError  # noqa: E402
from culturebias.testing.openai_server import CharacterTokenSource, OpenAITestServer  # noqa: E402
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer  # noqa: E402

GATE = 'name = "gate"\n\n[[criterion]]\nname = "within 0.5"\nbenchmark = "kobbq"\nmetric = "diff_bias_amb"\nat_most = 0.5\n'


@pytest.fixture(autouse=True)
def _quiet_and_contained(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a default run folder (./culturebias-<job id>) lands here
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # so does the default cache (~/.cache/culturebias)
    yield
    import structlog

    structlog.reset_defaults()


@pytest.fixture
def server():
    scorer = ScriptedScorer(lambda context, char: -0.1 * (1 + ord(char) % 5))
    with OpenAITestServer("served-model", CharacterTokenSource(scorer), ScriptedGenerator(lambda request, prompt: "A")) as running:
        yield running


def closed_port_url() -> str:
    with socket.socket() as probe:  # a port nothing listens on once this closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def write_spec(path: Path, url: str, benchmark: str = "kobbq", **parameters) -> Path:
    spec = {"id": "job-7", "provider_id": "culturebias", "benchmark_id": benchmark, "benchmark_index": 0,
            "model": {"url": url, "name": "served-model"}, "parameters": parameters, "callback_url": ""}
    path.write_text(json.dumps(spec), encoding="utf-8")
    return path


def served_parameters(tmp_path: Path, **more) -> dict:
    return {"options": {"limit": 2, "prompts": 1, "statistics": False}, "out": str(tmp_path / "run"), **more,
            "model": {"backend": "openai", "path": "served-model", "chat_template": "none", **more.pop("model", {})}}


def entry_point(monkeypatch, capfd, spec: Path | str) -> tuple[int, str, list[str]]:
    monkeypatch.setenv("EVALHUB_JOB_SPEC_PATH", str(spec))
    code = evalhub_main()
    captured = capfd.readouterr()
    return code, captured.out, [line for line in captured.err.splitlines() if line.strip()]


def test_a_job_on_a_served_model_runs_checks_and_reports_its_results(server, tmp_path, monkeypatch, capfd, costly):
    reported: list[JobResults] = []
    monkeypatch.setattr(DefaultCallbacks, "report_results", lambda self, results: reported.append(results))
    (tmp_path / "gate.toml").write_text(GATE, encoding="utf-8")
    params = served_parameters(tmp_path, model={"api_base": server.api_base}, policy=str(tmp_path / "gate.toml"))
    code, out, err = entry_point(monkeypatch, capfd, write_spec(tmp_path / "job.json", server.api_base, **params))
    assert code == 0, err
    assert "job job-7" in out and "results reported" in out
    assert [s.body["model"] for s in server.requests()] and {s.body["model"] for s in server.requests()} == {"served-model"}
    (results,) = reported
    named = {r.metric_name: r for r in results.results}
    assert results.id == "job-7" and results.model_name == "served-model" and "within 0.5" in named and "policy" in named
    assert json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))["benchmark"] == "kobbq"


def test_a_missing_job_spec_file_is_one_line_and_exit_2_from_the_installed_script(tmp_path, costly):  # a fresh interpreter
    missing = tmp_path / "meta" / "job.json"
    script = "import sys; from culturebias.bootstrap.governance import evalhub_main; sys.exit(evalhub_main())"
    env = {**os.environ, "HOME": str(tmp_path), "EVALHUB_JOB_SPEC_PATH": str(missing)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [f"culturebias-evalhub: error: eval-hub job spec {missing}: no such file "
                                        "(set EVALHUB_JOB_SPEC_PATH to the job.json eval-hub wrote)"]


@pytest.mark.parametrize(("text", "expected"), [
    ("{not json", "Invalid JSON"),
    ('{"id": "job-7", "provider_id": "culturebias", "benchmark_id": "kobbq", "benchmark_index": 0, "parameters": {}, '
     '"callback_url": ""}', "field 'model': Field required"),
])
def test_a_job_spec_that_is_not_json_or_not_a_job_spec_exits_2_naming_the_file(tmp_path, monkeypatch, capfd, text, expected):
    spec = tmp_path / "job.json"
    spec.write_text(text, encoding="utf-8")
    code, _, err = entry_point(monkeypatch, capfd, spec)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"culturebias-evalhub: error: eval-hub job spec {spec}: ") and expected in err[0]


def test_an_unknown_benchmark_exits_2_naming_the_known_ones_before_anything_is_written(tmp_path, monkeypatch, capfd):
    spec = write_spec(tmp_path / "job.json", closed_port_url(), benchmark="kobbqq", **served_parameters(tmp_path))
    code, _, err = entry_point(monkeypatch, capfd, spec)
    assert code == 2 and len(err) == 1, err
    assert "kobbqq" in err[0] and "kobbq" in err[0].replace("kobbqq", "") and not (tmp_path / "run").exists()


def test_a_policy_that_does_not_parse_exits_3_before_the_model_is_asked(server, tmp_path, monkeypatch, capfd):
    (tmp_path / "gate.toml").write_text(GATE.replace("at_most = 0.5", "at_most = = 0.5"), encoding="utf-8")
    params = served_parameters(tmp_path, model={"api_base": server.api_base}, policy=str(tmp_path / "gate.toml"))
    code, _, err = entry_point(monkeypatch, capfd, write_spec(tmp_path / "job.json", server.api_base, **params))
    assert code == 3 and len(err) == 1, err
    assert "gate.toml" in err[0] and server.requests(probe=True) == [] and not (tmp_path / "run").exists()


def test_an_unreachable_model_endpoint_exits_1_in_one_line(tmp_path, monkeypatch, capfd):
    url = closed_port_url()
    spec = write_spec(tmp_path / "job.json", url, **served_parameters(tmp_path, model={"api_base": url}))
    code, _, err = entry_point(monkeypatch, capfd, spec)
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith("culturebias-evalhub: error: ") and "cannot connect" in err[0] and url.removesuffix("/v1") in err[0]


def test_without_the_sdk_extra_it_exits_2_with_the_pip_command(tmp_path, monkeypatch, capfd):
    monkeypatch.setitem(sys.modules, "evalhub", None)  # find_spec: not importable
    code, _, err = entry_point(monkeypatch, capfd, tmp_path / "job.json")
    assert code == 2 and len(err) == 1, err
    assert "evalhub" in err[0] and "pip install -e '.[evalhub]'" in err[0]


def test_a_run_folder_of_another_benchmark_is_refused(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from culturebias.bootstrap import governance

    kobbq_run = SimpleNamespace(summary=SimpleNamespace(benchmark="kobbq"))
    monkeypatch.setattr(governance, "exported_run", lambda run_dir, verdict=None: kobbq_run)
    spec = JobSpec.model_validate_json(write_spec(tmp_path / "job.json", "", benchmark="cbbq", run="kobbq-run").read_text())
    with pytest.raises(ConfigError, match="parameters.run kobbq-run is a kobbq run, the job asks for cbbq"):
        governance.evalhub_runner(spec)


def test_a_failing_runner_reports_the_job_failed_to_eval_hub_and_raises(tmp_path):
    spec = write_spec(tmp_path / "job.json", "http://127.0.0.1:1/v1")

    def runner(job_spec: JobSpec):
        raise ConfigError("no such data")

    class Recorded(JobCallbacks):
        def __init__(self) -> None:
            self.updates: list = []

        def report_status(self, update) -> None:
            self.updates.append(update)

        def create_oci_artifact(self, spec):  # pragma: no cover - nothing is persisted
            raise AssertionError("no artifact expected")

        def report_results(self, results) -> None:  # pragma: no cover - a failed job reports none
            raise AssertionError("no results expected")

    adapter = job_adapter(runner, spec)
    assert isinstance(adapter, CultureBiasAdapter)
    callbacks = Recorded()
    with pytest.raises(ConfigError, match="no such data"):
        adapter.run_benchmark_job(adapter.job_spec, callbacks)
    assert callbacks.updates[-1].status == JobStatus.FAILED
    assert callbacks.updates[-1].error_message.message == "culturebias: no such data"
