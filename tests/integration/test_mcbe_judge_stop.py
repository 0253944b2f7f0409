"""A judge (or a rating model) that never answers with a number is stopped after K replies, and the summary says so.

Data: 8 gender BEIs (two words each) → 32 BA judge requests (4 criteria each) and 8 BS ratings.
"""

from __future__ import annotations

import pytest

from culturebias.adapters.judging.judge import GeneratorJudge
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
from culturebias.domain.errors import ConfigError
from culturebias.domain.mcbe.instances import BEI, McBEDataset
from culturebias.domain.mcbe.judge_stop import JudgeStopRule
from culturebias.domain.mcbe.options import McBEOptions
from culturebias.domain.mcbe.summary import McBESummary
from culturebias.testing.context import run_with_fakes

BEIS = tuple(
    BEI("gender", "背景。", f"[PLH]第{k}句。", ("甲", "乙"), "能力", "解释。", 5.0, "gender.xlsx", k + 2) for k in range(8)
)


class CountingGenerator(ScriptedGenerator):
    def __init__(self, rule, name):
        super().__init__(rule, name=name)
        self.batches: list[int] = []

    def generate(self, requests, progress=None):
        self.batches.append(len(requests))
        return super().generate(requests, progress)


def model_rule(rating: str):
    def rule(request, prompt: str) -> str:
        text = request.messages[0].content
        return rating if "程度打分" in text else "这句话有偏见。"

    return rule


def run(tmp_path, judge_reply: str = "我觉得还行", rating: str = "5", **protocol):
    judge_generator = CountingGenerator(lambda r, p: judge_reply, "scripted-judge")
    generator = CountingGenerator(model_rule(rating), "scripted-model")
    result = run_with_fakes(
        "mcbe",
        options={"tasks": "ba,bs", **protocol},
        dataset=McBEDataset(BEIS),
        out_dir=tmp_path / "out",
        scorer=ScriptedScorer(lambda c, x: -1.0),
        generator=generator,
        judge=GeneratorJudge(judge_generator, max_retries=3),
    )
    assert isinstance(result.summary, McBESummary)
    return result.summary, judge_generator, generator


def test_a_judge_that_never_gives_a_number_is_stopped_after_k_replies(tmp_path):
    summary, judge, _ = run(tmp_path, judge_probe=8, judge_max_unparseable=0.5)
    # only the first K = 8 requests reached the judge, each with its 1 + 3 attempts; the other 24 were never sent
    assert judge.batches == [8, 8, 8, 8]
    metrics, counts = summary.metrics, summary.counts
    assert metrics.tasks.ba is None and metrics.categories["gender"].ba is None  # no score, never 0.0
    assert summary.as_dict()["metrics"]["tasks"]["ba"] is None
    assert counts.ba_judge_requests == 32 and counts.ba_judge_not_sent == 24 and counts.ba_judge_stopped == 8
    assert metrics.categories["gender"].invalid.ba_judge_stopped == 8
    stop = metrics.reply_stops["ba"]
    assert (stop.task, stop.replier, stop.effect) == ("ba", "judge", "no_score")
    assert (stop.probe, stop.unparseable, stop.not_sent, stop.unscored, stop.max_retries) == (8, 8, 24, 8, 3)
    assert counts.ba_judge_invalid == 8  # the probe's verdicts without a number are counted too
    assert stop.max_unparseable == 0.5
    # BS (the model rates fine) keeps its score; the overall needs every task that ran, so it has none, and says why
    assert metrics.tasks.bs == 100.0 and metrics.overall is None
    assert summary.not_measured is not None and summary.not_measured.startswith("overall undefined: BA has no score")
    assert "bs" not in metrics.reply_stops
    assert any(n.startswith("BA has no score: the judge gave no number in 8 of its first 8 BA replies") for n in summary.notes)
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "## Replies without numbers: stopped" in report
    assert "When more than 50% of the first 8 verdicts hold no number, judging stops" in report
    assert "**BA lost its judge-based score in this run**" in report
    assert "| BA | judge | 8 / 8 | > 50% | 24 | 8 |" in report
    assert McBESummary.model_validate_json((tmp_path / "out" / "summary.json").read_text(encoding="utf-8")) == summary


def test_a_judge_that_answers_is_never_stopped_and_scores_as_in_one_call(tmp_path):
    guarded, judge, _ = run(tmp_path / "a", judge_reply="13", judge_probe=8)
    unguarded, one_call, _ = run(tmp_path / "b", judge_reply="13", judge_probe=0)
    assert judge.batches == [8, 24] and one_call.batches == [32]
    assert guarded.metrics.tasks.ba == unguarded.metrics.tasks.ba == pytest.approx(13 * 7.5 + 5 * 0.5)
    assert guarded.details.items == unguarded.details.items
    assert guarded.metrics.reply_stops is None and "reply_stops" not in guarded.as_dict()["metrics"]
    assert guarded.metrics.judge is not None and (guarded.metrics.judge.probe, guarded.metrics.judge.max_unparseable) == (8, 0.5)


def test_at_most_x_unparseable_in_the_probe_goes_on(tmp_path):
    # one criterion in four never gets a number: 25% unparseable ≤ 50%, the judge goes on
    def judge_rule(request, prompt):
        return "没有" if "亮点" in request.messages[0].content else "13"  # table7 and culturebias both name it

    judge_generator = CountingGenerator(judge_rule, "scripted-judge")
    result = run_with_fakes(
        "mcbe",
        options={"tasks": "ba", "judge_probe": 8},
        dataset=McBEDataset(BEIS),
        generator=ScriptedGenerator(model_rule("5"), name="model"),
        judge=GeneratorJudge(judge_generator, max_retries=1),
    )
    assert judge_generator.batches == [8, 2, 24, 6]  # probe and its retries, then the rest and theirs
    assert result.summary.metrics.tasks.ba == pytest.approx(13 * 7.5)
    assert result.summary.metrics.reply_stops is None


def test_a_model_that_never_rates_is_not_asked_again(tmp_path):
    summary, _, generator = run(tmp_path, judge_reply="13", rating="很严重", tasks="bs", judge_probe=4)
    assert generator.batches == [8]  # the first round only: no retry rounds
    stop = summary.metrics.reply_stops["bs"]
    assert (stop.replier, stop.effect, stop.unparseable, stop.not_sent, stop.unscored) == ("model", "no_retries", 4, 8, 0)
    assert summary.counts.bs_invalid == 8 and summary.counts.bs_retries_stopped == 8
    # no rating read at all: the worst-error rule would turn no answer into 50; BS has no score, and says why
    assert summary.metrics.tasks.bs is None and summary.metrics.overall is None
    assert "BS has no score: every rating was unparseable (8 of 8)" in (summary.not_measured or "")
    assert all(item.bs is not None and item.bs.error == 5.0 for item in summary.details.items.values())  # still recorded
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "| BS | model | 4 / 4 | > 50% | 8 | 0 |" in report


def test_fewer_requests_than_k_never_stop():
    rule = JudgeStopRule(probe=16, max_unparseable=0.5)
    assert not rule.stops([True] * 15)
    assert rule.stops([True] * 16) and not rule.stops([True] * 8 + [False] * 8)
    assert not JudgeStopRule(probe=0, max_unparseable=0.0).stops([True] * 100)
    assert not JudgeStopRule(probe=4, max_unparseable=1.0).stops([True] * 4)


@pytest.mark.parametrize("key, value", [("judge_probe", -1), ("judge_max_unparseable", 1.5)])
def test_the_rule_is_typed(key, value):
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=key):
        McBEOptions.model_validate({key: value})


def test_a_bad_rule_from_the_command_line_names_the_option(tmp_path):
    from culturebias.bootstrap.settings import load_settings

    with pytest.raises(ConfigError, match="protocol.judge_max_unparseable"):
        load_settings(assignments=["protocol.judge_max_unparseable=2"]).protocol_options("mcbe")
