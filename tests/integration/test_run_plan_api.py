"""`culturebias plan`, `culturebias.plan(...)` and the plan every run checks its budget against (replayed answers)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import culturebias
from culturebias.bootstrap.cli import main
from culturebias.errors import ConfigError


def replay_args(tmp_path: Path, limit: int = 6):
    sys.path.insert(0, str(Path(__file__).parent))
    from test_bbq_cli import kobbq_replay

    answers = kobbq_replay(tmp_path / "answers.jsonl", limit=limit)
    return {"model": {"backend": "replay", "path": str(answers)}, "options": {"prompts": "1,2", "limit": limit}}


def test_the_plan_counts_the_requests_the_run_asks(tmp_path):
    args = replay_args(tmp_path)
    plan = culturebias.plan("kobbq", **args)
    assert isinstance(plan, culturebias.RunPlan)
    summary = culturebias.evaluate("kobbq", **args)
    assert plan.requests == summary.counts.answers == 6 * 2 * 3
    assert plan.tokens_estimated  # a replay backend has no tokenizer
    assert plan.distinct_tokens < plan.input_tokens  # prompts share their instructions
    # one batch of the run's batch size (model.batch_size, 16 by default) timed after one warm-up request
    assert plan.eta_seconds is not None and plan.stages[0].calibration_requests == 16


def test_a_run_above_its_budget_is_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match=r"run.max_requests=20 < 36 requests[\s\S]*plan for kobbq"):
        culturebias.evaluate("kobbq", out=out, run={"max_requests": 20}, **replay_args(tmp_path))
    assert not (out / "summary.json").exists() and not (out / "results.sqlite").exists()
    summary = culturebias.evaluate("kobbq", run={"max_requests": 36}, **replay_args(tmp_path))
    assert summary.counts.answers == 36


def test_a_budget_smaller_than_the_calibration_is_refused_naming_it(tmp_path):
    with pytest.raises(ConfigError, match="run.max_requests=2 is smaller than the plan's calibration"):
        culturebias.plan("kobbq", run={"max_requests": 2}, **replay_args(tmp_path))


def test_the_plan_command_prints_without_running_and_refuses_sample_with_limit(tmp_path, capsys):
    answers = replay_args(tmp_path)["model"]["path"]
    base = ["plan", "kobbq", "--set", "model.backend=replay", "--set", f"model.path={answers}", "--set", "protocol.prompts=1,2"]
    assert main([*base, "--limit", "6"]) == 0
    printed = capsys.readouterr().out
    assert "requests: 36" in printed and "(estimated: no tokenizer)" in printed and "distinct tokens" in printed
    assert main([*base, "--sample", "40", "--limit", "6"]) == 2
    assert "pick one" in capsys.readouterr().err


def test_every_run_shows_its_plan_once_recorded_and_keeps_it_in_plan_json(tmp_path, capsys):
    args = replay_args(tmp_path)
    out = tmp_path / "out"
    assert main(["run", "kobbq", "--out", str(out), "--set", "run.progress=false", "--set", "model.backend=replay",
                 "--set", f"model.path={args['model']['path']}", "--set", "protocol.prompts=1,2", "--limit", "6"]) == 0
    printed = capsys.readouterr().err
    assert "plan for kobbq" in printed and "requests: 36" in printed and "ETA: not calibrated" in printed
    assert printed.count("run finished") == 1  # the dry run's own lines are not shown
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    kept = culturebias.RunPlan.model_validate_json((out / "plan.json").read_text(encoding="utf-8"))
    assert kept.requests == summary["counts"]["answers"] == 36 and kept.eta_seconds is None  # counted, not calibrated
    assert "plan.json" in json.loads((out / ".culturebias-outputs.json").read_text(encoding="utf-8"))["files"]
    culturebias.evaluate("kobbq", out=out, **args)  # the next run in the folder sets the earlier plan aside
    assert (out / "previous" / summary["run_id"] / "plan.json").is_file() and (out / "plan.json").is_file()


def test_run_plan_never_shows_none(tmp_path):
    out = tmp_path / "out"
    culturebias.evaluate("kobbq", out=out, run={"plan": "never"}, **replay_args(tmp_path))
    assert (out / "summary.json").is_file() and not (out / "plan.json").exists()


def test_a_resumed_run_shows_what_is_stored_and_about_what_is_left(tmp_path):
    args = replay_args(tmp_path)
    out = tmp_path / "out"

    def stop_midway(event):
        if event.done >= 12 and not event.finished:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        culturebias.evaluate("kobbq", out=out, run={"chunk_size": 6}, on_progress=stop_midway, **args)
    first = culturebias.RunPlan.model_validate_json((out / "plan.json").read_text(encoding="utf-8"))
    assert first.stored_requests is None
    summary = culturebias.evaluate("kobbq", out=out, resume=True, run={"chunk_size": 6}, **args)
    resumed = culturebias.RunPlan.model_validate_json((out / "plan.json").read_text(encoding="utf-8"))
    assert 6 <= resumed.stored_requests < 36 and summary.counts.answers == 36
    assert f"about {36 - resumed.stored_requests} left" in resumed.text()


def _count_plan(benchmark: str, assignments: list[str]):
    """``make_plan`` without calibration, as a run makes it, and the container it planned with."""
    from culturebias.bootstrap.api import _ReadSource
    from culturebias.bootstrap.container import make_container
    from culturebias.bootstrap.planning import make_plan
    from culturebias.bootstrap.registry import registry
    from culturebias.bootstrap.settings import load_settings

    settings = load_settings(None, ["store.backend=memory", *assignments]).for_benchmark(benchmark)
    container = make_container(benchmark, settings, None)
    service = registry().benchmark(benchmark).service_class()(settings.protocol_options(benchmark))
    return make_plan(benchmark, settings, container, service, _ReadSource(container.source()), calibrate=False), container


@pytest.mark.parametrize("mode", ["generate", "likelihood"])
def test_a_count_plan_on_a_served_model_asks_the_server_nothing(mode):
    # nothing listens on port 9: any request of the dry run (a probe, a template render) would fail it
    plan, _ = _count_plan("kobbq", [
        "model.backend=openai", "model.api_base=http://127.0.0.1:9/v1", "model.path=served", "model.cache=off",
        "model.max_retries=0", "protocol.limit=2", "protocol.prompts=1", f"protocol.mode={mode}",
    ])
    assert plan.requests == 2 * 3 * (1 if mode == "generate" else 3) and plan.tokens_estimated


def test_a_count_plan_on_a_local_model_loads_its_tokenizer_not_its_weights():
    plan, container = _count_plan("kobbq", ["model.backend=hf", "protocol.limit=1", "protocol.prompts=1"])
    assert plan.requests == 3 and not plan.tokens_estimated and plan.eta_seconds is None
    assert container.model_backend()._loaded is None  # the weights were never loaded
