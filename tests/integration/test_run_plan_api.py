"""`culturebias plan`, `culturebias.plan(...)` and the plan every run checks its budget against (replayed answers)."""

from __future__ import annotations

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
    assert plan.eta_seconds is not None and plan.stages[0].calibration_requests == 4


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
