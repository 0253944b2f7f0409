"""The public Python API: evaluate, load_summary, list_runs, benchmarks, backends; no exits, typed errors."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import culturebias
from culturebias.domain.summary import SUMMARY_SCHEMA_VERSION
from culturebias.errors import ConfigError, DataError, ResumeMismatchError, SchemaVersionError, UnknownNameError

API_PAGE = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def kobbq_replay(path: Path, limit: int) -> Path:
    sys.path.insert(0, str(Path(__file__).parent))
    from test_bbq_cli import kobbq_replay as write

    return write(path, limit=limit)


def replay_args(tmp_path: Path, limit: int = 12):
    answers = kobbq_replay(tmp_path / "answers.jsonl", limit)
    return {"model": {"backend": "replay", "path": str(answers)}, "options": {"prompts": "1,2", "limit": limit}}


def test_evaluate_returns_the_typed_summary_and_writes_nothing_without_out(tmp_path):
    summary = culturebias.evaluate("kobbq", **replay_args(tmp_path))
    assert type(summary).__name__ == "KoBBQSummary" and summary.benchmark == "kobbq"
    assert summary.run_id.startswith("kobbq-") and summary.schema_version == SUMMARY_SCHEMA_VERSION
    assert summary.counts.items == 12 and summary.model.generator.backend == "replay"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.jsonl"]  # no store, no summary.json, no report


def test_evaluate_with_out_writes_summary_report_and_store_and_loads_back(tmp_path):
    events = []
    out = tmp_path / "run"
    summary = culturebias.evaluate("kobbq", out=out, on_progress=events.append, **replay_args(tmp_path))
    assert (out / "summary.json").is_file() and (out / "report.md").is_file() and (out / "results.sqlite").is_file()
    loaded = culturebias.load_summary(out)
    assert loaded == summary and culturebias.load_summary(out / "summary.json").run_id == summary.run_id
    runs = culturebias.list_runs(out)
    assert [(r.run_id, r.status) for r in runs] == [(summary.run_id, "finished")]
    assert culturebias.list_runs(out / "results.sqlite", benchmark="cbbq") == []
    assert events and events[-1].finished and events[-1].done == events[-1].total == 12 * 2 * 3


def test_settings_objects_may_be_passed_instead_of_dicts(tmp_path):
    from culturebias.bootstrap.settings import ModelSettings, RunSettings
    from culturebias.domain.kobbq.options import KoBBQOptions

    args = replay_args(tmp_path, limit=6)
    summary = culturebias.evaluate(
        "kobbq",
        model=ModelSettings(backend="replay", path=args["model"]["path"]),
        options=KoBBQOptions(prompts=["1", "2"], limit=6),
        run=RunSettings(seed=3),
    )
    assert summary.counts.items == 6 and summary.config["run"]["seed"] == 3


def test_resume_continues_a_failed_run_in_the_same_store(tmp_path):
    args = replay_args(tmp_path, limit=6)
    out = tmp_path / "run"
    (tmp_path / "answers.jsonl").write_text("", encoding="utf-8")  # every answer missing: the run fails
    with pytest.raises(DataError, match="no answer for"):
        culturebias.evaluate("kobbq", out=out, **args)
    failed = culturebias.list_runs(out)
    assert [r.status for r in failed] == ["failed"] and "no answer for" in failed[0].failure
    kobbq_replay(tmp_path / "answers.jsonl", 6)
    with pytest.raises(ResumeMismatchError, match="different configuration"):
        culturebias.evaluate("kobbq", out=out, resume=True, **{**args, "options": {"prompts": "1,2", "limit": 5}})
    summary = culturebias.evaluate("kobbq", out=out, resume=True, **args)
    assert summary.run_id == failed[0].run_id
    assert [r.status for r in culturebias.list_runs(out)] == ["finished"]


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"model": {"backend": "nope"}}, UnknownNameError, "unknown backend 'nope'"),
        ({"store": {"backend": "nope"}}, UnknownNameError, "unknown store 'nope'"),
        ({"options": {"limit": "many"}}, ConfigError, "protocol.limit"),
        ({"options": {"limmit": 3}}, UnknownNameError, "did you mean 'protocol.limit'?"),
        ({"model": {"batch_size": 0}}, ConfigError, "model.batch_size"),
    ],
)
def test_bad_input_is_a_typed_error_naming_the_key_and_writes_nothing(kwargs, error, text, tmp_path):
    store = tmp_path / "results.sqlite"
    with pytest.raises(error, match=re.escape(text)):
        culturebias.evaluate("kobbq", out=tmp_path / "out", **({"store": {"path": str(store)}} | kwargs))
    assert not store.exists() and not (tmp_path / "out").exists()


def test_an_unknown_benchmark_is_a_typed_error():
    with pytest.raises(UnknownNameError, match=r"unknown benchmark 'kobq'; did you mean 'kobbq'\?"):
        culturebias.evaluate("kobq")


def test_load_summary_checks_the_schema_version(tmp_path):
    summary = culturebias.evaluate("kobbq", **replay_args(tmp_path, limit=3))
    payload = summary.as_dict()
    older = tmp_path / "older.json"
    older.write_text(json.dumps({**payload, "schema_version": "1.0"}), encoding="utf-8")
    assert culturebias.load_summary(older).metrics == summary.metrics  # 1.x has 2.0's layout
    for version, word in (("3.0", "newer"), ("0.9", "older")):
        path = tmp_path / f"v{version}.json"
        path.write_text(json.dumps({**payload, "schema_version": version}), encoding="utf-8")
        with pytest.raises(SchemaVersionError) as caught:
            culturebias.load_summary(path)
        assert f"schema_version {version} is {word}" in str(caught.value) and SUMMARY_SCHEMA_VERSION in str(caught.value)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({**payload, "counts": {**payload["counts"], "items": "many"}}), encoding="utf-8")
    with pytest.raises(DataError, match=r"field 'counts\.items'"):
        culturebias.load_summary(broken)


def test_the_api_leaves_the_hosts_logging_and_process_alone(tmp_path):
    code = textwrap.dedent(
        f"""
        import logging, sys, json
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_bbq_cli import kobbq_replay
        import structlog
        before = structlog.get_config()
        handlers = list(logging.getLogger().handlers)
        import culturebias
        from pathlib import Path
        answers = kobbq_replay(Path({str(tmp_path)!r}) / "a.jsonl", limit=3)
        try:
            culturebias.evaluate("kobbq", model={{"backend": "replay", "path": str(answers)}}, options={{"limit": 3, "prompts": "9"}})
        except culturebias.errors.ConfigError as error:
            print("typed:", type(error).__name__)
        print("same logging:", structlog.get_config() == before and logging.getLogger().handlers == handlers)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "typed: ConfigError" in done.stdout and "same logging: True" in done.stdout


def test_an_embedded_evaluation_writes_nothing_to_stdout_or_stderr_and_logs_to_the_hosts_file(tmp_path):
    """The host logs to a file; evaluate() on a tiny hf model (transformers' bars and warnings included) stays silent."""
    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    model = cached_tiny_causal_lm(arch="llama")  # built here: the host only loads it
    host_log = tmp_path / "host.log"
    code = textwrap.dedent(
        f"""
        import logging
        logging.basicConfig(level=logging.INFO, filename={str(host_log)!r})
        import culturebias
        summary = culturebias.evaluate(
            "kobbq", model={{"path": {str(model)!r}}}, options={{"limit": 2, "prompts": "1", "mode": "likelihood"}},
            run={{"cache_dir": {str(tmp_path / "cache")!r}, "log_level": "debug"}}, out={str(tmp_path / "run")!r},
        )
        assert summary.counts.items == 2
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (done.stdout, done.stderr) == ("", "")
    logged = host_log.read_text(encoding="utf-8")
    assert "INFO:culturebias.hf:loading model" in logged and "INFO:culturebias.run:run finished" in logged


def test_two_evaluations_with_different_models_share_no_state(tmp_path):
    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    first = culturebias.evaluate(
        "kobbq", model={"path": str(cached_tiny_causal_lm(arch="llama"))}, options={"limit": 4, "prompts": "1", "mode": "likelihood"},
        run={"cache_dir": str(tmp_path / "cache")},
    )  # fmt: skip
    second = culturebias.evaluate(
        "kobbq", model={"path": str(cached_tiny_causal_lm(arch="gpt2"))}, options={"limit": 4, "prompts": "1", "mode": "likelihood"},
        run={"cache_dir": str(tmp_path / "cache")},
    )  # fmt: skip
    again = culturebias.evaluate(
        "kobbq", model={"path": str(cached_tiny_causal_lm(arch="llama"))}, options={"limit": 4, "prompts": "1", "mode": "likelihood"},
        run={"cache_dir": str(tmp_path / "cache")},
    )  # fmt: skip
    assert first.model.scorer.model != second.model.scorer.model
    assert first.run_id != again.run_id
    assert again.metrics == first.metrics and again.model.scorer == first.model.scorer


def test_benchmarks_and_backends_come_from_the_registry():
    assert {b.name for b in culturebias.benchmarks()} >= {"twbias", "kobbq", "cbbq", "mcbe", "libra"}
    hf = next(b for b in culturebias.backends() if b.name == "hf")
    assert "loglikelihood" in hf.capabilities and hf.options_model().__name__ == "HFOptions"


def readme_api_example() -> str:
    text = API_PAGE.read_text(encoding="utf-8")
    match = re.search(r"<!-- api-example -->\s*```python\n(.*?)```", text, re.DOTALL)
    assert match, "docs/api.md has no <!-- api-example --> python block"
    return match.group(1)


@pytest.mark.slow
def test_the_readme_api_example_runs(tmp_path, smollm2_installed, user_cache_dir):
    done = subprocess.run(
        [sys.executable, "-c", readme_api_example()], cwd=tmp_path, capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "runs" / "libra" / "summary.json").is_file()
    assert "libra-" in done.stdout
    logging.getLogger(__name__).info(done.stdout)
