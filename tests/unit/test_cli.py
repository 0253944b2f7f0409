"""The CLI as a thin layer over the API: list, schema, generated help, did-you-mean, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest

from culturebias.bootstrap.cli import EXIT_CODES, exit_code, main
from culturebias.bootstrap.registry import registry
from culturebias.domain import errors


@pytest.fixture(autouse=True)
def _restore_logging():
    yield
    import structlog

    structlog.reset_defaults()


def test_list_shows_benchmarks_backends_and_stores(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "kobbq    KoBBQ (Korea, Korean); licence: MIT; bundled data" in out
    assert "twbias   TWBias (Taiwan, Traditional Chinese); licence: none stated by the authors; bring your own data" in out
    assert "openai   any OpenAI-compatible server" in out and "can: generate, loglikelihood" in out
    assert "sqlite" in out and "memory" in out


def test_list_as_json_reads_the_registry(capsys):
    assert main(["list", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [b["name"] for b in payload["benchmarks"]] == registry().benchmarks.names()
    assert {b["name"]: b["bundled_data"] for b in payload["benchmarks"]}["cbbq"] is True
    assert {b["name"] for b in payload["backends"]} == set(registry().backends.names())


@pytest.mark.parametrize("benchmark", sorted(d.name for d in registry().benchmarks.all()))
def test_schema_prints_the_json_schema_of_the_summary(benchmark, capsys):
    assert main(["schema", benchmark]) == 0
    schema = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    assert {"schema_version", "run_id", "metrics", "counts", "details"} <= set(schema["properties"])
    assert schema["properties"]["benchmark"]["const"] == benchmark


def test_run_help_lists_every_setting_key_with_type_and_default(capsys):
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    for line in ("model.batch_size", "model.api_base", "store.backend", "run.chunk_size", "protocol.prompt_types", "protocol.jsd_bins"):
        assert line in out, line
    assert "-- backend openai --" in out and "-- benchmark twbias --" in out
    batch = next(line for line in out.splitlines() if line.strip().startswith("model.batch_size"))
    assert "int" in batch and "default 16" in batch


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("culturebias ")


@pytest.mark.parametrize(
    ("assignment", "hint"),
    [
        ("model.batchsize=4", "did you mean 'model.batch_size'?"),
        ("run.chunksize=4", "did you mean 'run.chunk_size'?"),
        ("modle.path=x", "did you mean 'model'?"),
        ("protocol.prompt_type=1", "did you mean 'protocol.prompt_types'?"),
        ("model.backend=onxx", "did you mean 'onnx'?"),
    ],
)
def test_an_unknown_key_gets_a_suggestion_and_exit_code_2(assignment, hint, tmp_path, capsys):
    code = main(["run", "twbias", "--out", str(tmp_path / "out"), "--set", assignment])
    err = capsys.readouterr().err
    assert code == 2, err
    assert hint in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_setting_of_another_backend_names_its_owner(tmp_path, capsys):
    assert main(["run", "kobbq", "--out", str(tmp_path), "--set", "model.api_base=http://127.0.0.1:1/v1"]) == 2
    assert "model.api_base is not a setting of backend 'hf'; it belongs to 'openai'" in capsys.readouterr().err


def test_exit_codes_are_documented_per_error_type():
    assert exit_code(errors.ConfigError("x")) == 2
    assert exit_code(errors.UnknownNameError("store", "x", ["sqlite"])) == 2
    assert exit_code(errors.MissingDataError("x")) == 3
    assert exit_code(errors.DataError("x", file="f", row=2, field="a")) == 3
    assert exit_code(errors.CapabilityError("hf", "x")) == 4
    assert exit_code(errors.ModelLoadError("x")) == 5
    assert exit_code(errors.ResumeMismatchError("x")) == 6
    assert exit_code(errors.PluginError("x")) == 7
    assert exit_code(errors.CultureBiasError("x")) == 1
    from culturebias.bootstrap import cli

    documented = cli.__doc__ or ""
    for _, code, name in EXIT_CODES:
        assert str(code) in documented, name


def test_missing_data_exits_3_naming_the_setting(tmp_path, capsys):
    assert main(["run", "twbias", "--out", str(tmp_path / "out"), "--set", "run.progress=false"]) == 3
    err = capsys.readouterr().err
    assert "data.path" in err and "Traceback" not in err


def test_the_installed_script_exits_with_mains_code(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", "from culturebias.bootstrap.cli import console_main; console_main()", "list", "--format", "json"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and json.loads(done.stdout)["stores"]
    bad = subprocess.run(
        [sys.executable, "-c", "from culturebias.bootstrap.cli import console_main; console_main()", "run", "kobbq",
         "--out", str(tmp_path), "--set", "store.backend=sqlit"],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert bad.returncode == 2 and "did you mean 'sqlite'?" in bad.stderr and "Traceback" not in bad.stderr
