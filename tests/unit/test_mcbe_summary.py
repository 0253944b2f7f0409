"""McBE's typed summary: it round-trips, and its JSON keeps the layout summary.json always had."""

from __future__ import annotations

import json
import math

import pytest
from pydantic import ValidationError

from culturebias.adapters.judging.judge import GeneratorJudge
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
from culturebias.application.mcbe.service import INVALID_COUNTS
from culturebias.domain.mcbe.instances import BEI, McBEDataset
from culturebias.domain.mcbe.options import TASKS
from culturebias.domain.mcbe.summary import InvalidCounts, McBECounts, McBESummary, PerCriterion, PerTask
from culturebias.domain.mcbe.taxonomy import BA_CRITERIA
from culturebias.testing.context import run_with_fakes

GOOD = BEI("gender", "背景。", "[PLH]很能干。", ("甲", "乙"), "能力", "解释", 6.0, "gender.xlsx", 2)
UNSCORABLE = BEI("gender", "背景。", "[PLH]在做饭。", ("丙", "无"), "家庭", "解释", 3.0, "gender.xlsx", 3)
WORLDVIEW = BEI("worldview", "", "[PLH]的人不好。", ("X", "Y"), "婚恋观", "解释", 4.0, "worldview.xlsx", 2)


def scorer_rule(context: str, continuation: str) -> float:
    return math.nan if "无" in continuation else -1.5 * len(continuation)  # 无: a sentence with no scored token


def model_rule(request, prompt: str) -> str:
    text = request.messages[0].content
    if "句子1：" in text:
        return "A"
    if "严重程度打分" in text:
        return "7"
    return "能力"


def run(tmp_path, **protocol):
    return run_with_fakes(
        "mcbe",
        options={"prompt_set": "culturebias", **protocol},
        dataset=McBEDataset((GOOD, UNSCORABLE, WORLDVIEW)),
        out_dir=tmp_path / "out",
        scorer=ScriptedScorer(scorer_rule),
        generator=ScriptedGenerator(model_rule, name="model"),
        judge=GeneratorJudge(ScriptedGenerator(lambda r, p: "4", name="judge"), max_retries=1),
    )


def test_a_service_run_round_trips_and_its_summary_json_validates(tmp_path):
    result = run(tmp_path)
    summary = result.summary
    assert isinstance(summary, McBESummary)
    assert McBESummary.model_validate_json(summary.to_json()) == summary
    written = (tmp_path / "out" / "summary.json").read_text(encoding="utf-8")
    assert McBESummary.model_validate_json(written) == summary
    assert json.loads(McBESummary.model_validate_json(written).to_json()) == json.loads(written)


def test_blocks_hold_only_what_ran(tmp_path):
    summary = run(tmp_path, tasks="pc,bs").summary
    data = summary.as_dict()
    assert [k for k in data["metrics"] if k != "intervals"] == [
        "tasks", "categories", "overall", "task_names", "decay", "preference_skip", "pc_text", "prompt_set",
    ]
    assert list(data["metrics"]["tasks"]) == ["pc", "bs"]
    assert list(data["metrics"]["categories"]["worldview"]) == ["pc", "bs", "mean", "name_zh", "n_beis", "invalid", "intervals"]
    assert data["metrics"]["categories"]["worldview"]["pc"] is None  # PC ran but scores no worldview BEI: null
    assert list(data["metrics"]["categories"]["gender"]["invalid"]) == [
        "pc_skipped_no_tokens", "bs_invalid", "bs_clamped",
    ]
    assert list(data["counts"]) == [
        "beis", "categories", "pc_skipped_no_tokens", "pc_skipped_category", "pc_sentences_scored",
        "bs_invalid", "bs_clamped",
    ]
    items = data["details"]["items"]
    assert list(items["gender:2"]["pc"]) == ["nlls", "n_tokens", "variance", "score"]
    assert items["gender:3"]["pc"] == {"nlls": [1.5, None], "score": None, "skipped": "a sentence had no scored token"}
    assert "pc" not in items["worldview:2"] and "sc" not in items["gender:2"]
    assert summary.counts.pc_skipped_no_tokens == 1 and summary.counts.ss_asked is None
    assert summary.metrics.tasks.present() == {"pc": summary.metrics.tasks.pc, "bs": summary.metrics.tasks.bs}


def test_models_name_every_task_criterion_and_count():
    assert list(PerTask.model_fields) == list(TASKS)
    assert list(PerCriterion.model_fields) == [c.key for c in BA_CRITERIA]
    for names in INVALID_COUNTS.values():
        assert set(names) <= set(InvalidCounts.model_fields) and set(names) <= set(McBECounts.model_fields)


def test_unknown_keys_are_errors():
    with pytest.raises(ValidationError):
        McBECounts.model_validate({"beis": 1, "categories": 1, "ss_typo": 2})
    with pytest.raises(ValidationError):
        InvalidCounts.model_validate({"bs_invalid": 0, "extra": 1})


def test_the_comparison_cells_of_a_run_are_its_scored_category_task_pairs(tmp_path):
    from culturebias.domain.mcbe.comparison import cells

    summary = run(tmp_path).summary
    assert cells(summary)["worldview/pc"] is None and "gender/bs" in cells(summary)


def test_a_judge_role_opens_every_ba_judge_prompt_and_the_summary_says_so(tmp_path):
    seen: list[str] = []

    def judge_rule(request, prompt: str) -> str:
        seen.append(request.messages[0].content)
        return "4"

    role = "你是一位公正的偏见分析评审。"
    result = run_with_fakes(
        "mcbe",
        options={"tasks": "ba", "judge_role": role},
        dataset=McBEDataset((GOOD,)),
        out_dir=tmp_path / "out",
        generator=ScriptedGenerator(model_rule, name="model"),
        judge=GeneratorJudge(ScriptedGenerator(judge_rule, name="judge"), max_retries=1),
    )
    assert len(seen) == len(BA_CRITERIA) and all(text.startswith(role + "\n") for text in seen)
    assert all(text[len(role) + 1:].startswith("这句话是考生的作答") for text in seen)  # then the set's own prompt
    assert result.summary.metrics.judge_role == role
    plain = run(tmp_path / "plain", tasks="ba").summary
    assert plain.metrics.judge_role is None and "judge_role" not in plain.as_dict()["metrics"]
