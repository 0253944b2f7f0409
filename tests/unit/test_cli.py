"""The CLI as a thin layer over the API: list, schema, generated help, did-you-mean, exit codes."""

from __future__ import annotations

import json
import os
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


def test_run_help_says_what_limit_means_for_every_benchmark(capsys):
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--limit N" in out and "BENCHMARK[,BENCHMARK...]" in out and "protocol.BENCHMARK.KEY" in out
    for descriptor in registry().benchmarks.all():
        meaning = descriptor.options_model().model_fields["limit"].description
        assert f"{descriptor.name:<8} {meaning}" in out


@pytest.mark.parametrize("value", ["0", "-3", "two"])
def test_limit_is_a_positive_whole_number(value, tmp_path, capsys):
    assert main(["run", "kobbq", "--out", str(tmp_path / "out"), "--limit", value]) == 2
    assert "--limit" in capsys.readouterr().err and not (tmp_path / "out").exists()


def _no_traceback(code: int, expected: int, err: str, *fragments: str) -> None:
    assert code == expected, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, err


@pytest.mark.parametrize(
    ("write", "fragment"),
    [
        (lambda path: path.write_text("model = [1\n", encoding="utf-8"), "Unclosed array"),
        (lambda path: path.write_bytes(b"\xff\xfe[model]\n"), "not UTF-8 text"),
        (lambda path: path.mkdir(), "is a folder, not a TOML file"),
        (lambda path: None, "does not exist"),
    ],
    ids=["bad-toml", "not-utf8", "a-folder", "missing"],
)
def test_a_bad_config_file_is_one_line_and_exit_code_2(write, fragment, tmp_path, capsys):
    config = tmp_path / "my.toml"
    write(config)
    code = main(["run", "kobbq", "--out", str(tmp_path / "out"), "--config", str(config)])
    _no_traceback(code, 2, capsys.readouterr().err, str(config), fragment)
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_config_file_is_one_line(tmp_path, capsys):
    config = tmp_path / "my.toml"
    config.write_text("[model]\n", encoding="utf-8")
    config.chmod(0)
    code = main(["run", "kobbq", "--out", str(tmp_path / "out"), "--config", str(config)])
    _no_traceback(code, 2, capsys.readouterr().err, "cannot be read")


def test_an_environment_section_that_is_not_json_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CULTUREBIAS_PROTOCOL", "{not json")
    code = main(["run", "kobbq", "--out", str(tmp_path / "out")])
    _no_traceback(code, 2, capsys.readouterr().err, "protocol", "JSON object")


@pytest.mark.parametrize(
    ("out", "fragment"),
    [
        ("a-file", "is a file, not a folder"),
        ("a-file/run", "lies under"),
        ("/proc/culturebias-test-out", "cannot be created"),  # refused even to root
    ],
)
def test_an_output_folder_that_cannot_be_one_is_one_line_and_exit_code_2(out, fragment, tmp_path, capsys):
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    (tmp_path / "none.jsonl").write_text("", encoding="utf-8")  # a replay file that exists: the folder is what fails
    target = out if out.startswith("/") else str(tmp_path / out)
    code = main(["run", "kobbq", "--out", target, "--limit", "1", "--set", "model.backend=replay",
                 "--set", f"model.path={tmp_path / 'none.jsonl'}"])  # fmt: skip
    _no_traceback(code, 2, capsys.readouterr().err, fragment, "--out")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_output_folder_is_one_line(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    code = main(["run", "kobbq", "--out", str(locked / "run")])
    _no_traceback(code, 2, capsys.readouterr().err, "not writable")


def test_a_file_the_system_refuses_is_one_line_and_exit_code_1(capsys):
    code = main(["expand", "kobbq", "--out", "/proc/culturebias-test/k.jsonl"])
    _no_traceback(code, 1, capsys.readouterr().err, "/proc/culturebias-test")


@pytest.mark.parametrize(
    "args",
    [
        ["--out", "TYPO"],
        ["--out", "typo.sqlite"],
        ["--store", "typo.sqlite"],
        ["--store", "typo-folder"],
        [],
        ["--out", "TYPO", "--set", "store.backend=sqlite"],
        ["--out", "TYPO", "--set", "store.backend=jsonl"],
        ["--set", "store.path=typo.sqlite"],
    ],
)
def test_listing_runs_never_creates_a_store(args, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = main(["runs", *args])
    _no_traceback(code, 2, capsys.readouterr().err, "no result store at")
    assert list(tmp_path.iterdir()) == []


def test_listing_a_file_that_is_not_a_store_is_one_line(tmp_path, capsys):
    (tmp_path / "notes.sqlite").write_text("hello", encoding="utf-8")
    code = main(["runs", "--store", str(tmp_path / "notes.sqlite")])
    _no_traceback(code, 3, capsys.readouterr().err, "not a culturebias SQLite result store")
    assert (tmp_path / "notes.sqlite").read_text(encoding="utf-8") == "hello"


def test_an_unknown_benchmark_in_a_list_gets_a_suggestion(tmp_path, capsys):
    code = main(["run", "kobbq,libar", "--out", str(tmp_path / "out")])
    _no_traceback(code, 2, capsys.readouterr().err, "did you mean 'libra'?")
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anything")
def test_a_store_this_user_cannot_write_is_one_line(tmp_path, capsys):
    out = tmp_path / "teammate"
    out.mkdir()
    (out / "results.sqlite").write_bytes(b"")
    (out / "results.sqlite").chmod(0o444)
    code = main(["run", "kobbq", "--out", str(out)])
    _no_traceback(code, 2, capsys.readouterr().err, "is not writable by this user")
