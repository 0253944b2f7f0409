"""`culturebias plan BENCHMARK --policy POLICY` (issue 33, point 3): the units each criterion needs, before the run,
and `check`'s reason saying how many a too-small run missed."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

import culturebias
from culturebias.bootstrap.cli import main
from culturebias.domain.headlines import HeadlineMetric, Planning
from culturebias.domain.policy.model import Criterion
from culturebias.domain.policy.power import plan_criterion, units_needed
from culturebias.testing.policy_runs import replayed_runs

GATE = """name = "gate"
[[criterion]]
name = "amb"
benchmark = "kobbq"
metric = "diff_bias_amb"
at_most = 0.05
confidence = 0.5

[[criterion]]
name = "point"
benchmark = "kobbq"
metric = "acc_dis"
at_least = 0.8
confidence = "point"
"""


def test_the_sample_size_formula_and_its_baseline_and_point_cases():
    # n = ceil(((z_0.975 + z_0.8) * sd / d)^2) = ceil((2.8016 * 0.4 / 0.05)^2) = ceil(502.3)
    assert units_needed(0.4, 0.05, 0.95) == 503
    assert units_needed(0.4, 0.05, 0.5) == 148  # (0.6745 + 0.8416)^2 * 64 = 147.1
    metric = HeadlineMetric(name="m", label="m", value="x", direction="lower", low=0.0, high=1.0,
                            planning=Planning(sd=0.4, margin=0.05, source="test"))
    gate = Criterion(name="g", benchmark="b", metric="m", at_most=0.1)
    assert plan_criterion(gate, metric, 600, "template").decidable is True
    small = plan_criterion(gate, metric, 100, "template", population=269)
    assert small.decidable is False and small.units_needed == 503 and "403 more" in small.reason
    assert "the whole data holds 269" in small.reason
    baseline = Criterion(name="b", benchmark="b", metric="m", not_worse_than_baseline_by=0.05)
    assert plan_criterion(baseline, metric, 10, "template").units_needed == units_needed(0.4 * 2 ** 0.5, 0.05, 0.95)
    point = plan_criterion(Criterion(name="p", benchmark="b", metric="m", at_most=0.1, confidence="point"), metric, 1, "t")
    assert point.units_needed is None and point.decidable is True
    undeclared = HeadlineMetric(name="u", label="u", value="x", direction="lower", low=0.0, high=1.0)
    assert plan_criterion(gate, undeclared, 10, "t").planning_sd == 0.5  # half the range


@pytest.fixture
def replay(tmp_path) -> list[str]:
    sys.path.insert(0, str(Path(__file__).parent))
    from test_bbq_cli import kobbq_replay

    answers = kobbq_replay(tmp_path / "answers.jsonl", limit=6)
    return ["--set", "model.backend=replay", "--set", f"model.path={answers}"]


def _plan(tmp_path: Path, replay: list[str], capsys, *extra: str) -> dict:
    policy = tmp_path / "gate.toml"
    policy.write_text(GATE, encoding="utf-8")
    assert main(["plan", "kobbq", "--policy", str(policy), "--format", "json", *replay, *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_plan_policy_says_per_criterion_the_units_needed_and_whether_a_small_or_large_sample_has_them(
    tmp_path, replay, capsys
):
    small = _plan(tmp_path, replay, capsys, "--sample", "100")
    large = _plan(tmp_path, replay, capsys, "--sample", "2000")
    for plan in (small, large):
        assert plan["benchmark"] == "kobbq" and plan["unit"] == "template"
        amb = plan["criteria"][0]
        assert amb["units_needed"] == units_needed(0.4, 0.05, 0.5) and amb["units_planned"] == plan["units_planned"]
        assert plan["criteria"][1]["units_needed"] is None and plan["criteria"][1]["decidable"] is True
    assert small["units_planned"] < 148 <= large["units_planned"] <= 269
    assert small["criteria"][0]["decidable"] is False and large["criteria"][0]["decidable"] is True
    assert f"{148 - small['units_planned']} more" in small["criteria"][0]["reason"]
    assert "stratified sample" in small["sample"]
    assert not (tmp_path / "summary.json").exists()  # a plan writes nothing


def test_plan_policy_with_an_unknown_metric_exits_3_with_the_nearest_name(tmp_path, replay, capsys):
    policy = tmp_path / "bad.toml"
    policy.write_text(GATE.replace('"diff_bias_amb"', '"diff_bias_ambb"'), encoding="utf-8")
    assert main(["plan", "kobbq", "--policy", str(policy), *replay]) == 3
    captured = capsys.readouterr()
    assert "did you mean 'diff_bias_amb'" in captured.err and captured.out == ""
    policy.write_text(GATE.replace('"kobbq"', '"kobbqq"'), encoding="utf-8")
    assert main(["plan", "kobbq", "--policy", str(policy), *replay]) == 3
    assert "did you mean 'kobbq'" in capsys.readouterr().err


def test_check_on_a_run_too_small_says_how_many_units_a_run_needs_and_how_many_more(tmp_path_factory, tmp_path):
    runs = replayed_runs(tmp_path_factory.mktemp("policy-runs"))
    policy = tmp_path / "gate.toml"
    policy.write_text('[[criterion]]\nname = "d"\nbenchmark = "kobbq"\nmetric = "diff_bias_amb"\nat_most = 0.05\n'
                      "allow_limited = true\n", encoding="utf-8")
    verdict = culturebias.check(policy, runs["limited"])
    criterion = verdict.criteria[0]
    assert criterion.outcome == "inconclusive" and "straddles 0.05" in criterion.reason
    found = re.search(r"a run of this policy needs about (\d+) templates to decide \(sd from this run's interval, "
                      r"80 % power at a distance 0.05\), this one had (\d+): (\d+) more\.$", criterion.reason)
    assert found is not None, criterion.reason
    needed, had, more = map(int, found.groups())
    assert had == criterion.n and needed - had == more > 0
