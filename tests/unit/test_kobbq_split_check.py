"""KoBBQ footnote 14: one model's run on the evaluation split against its run on the full set (`culturebias split-check`)."""

from __future__ import annotations

import functools
import json

import pytest
from scipy import stats

from culturebias.bootstrap.cli import main
from culturebias.domain.errors import ConfigError
from culturebias.domain.identity import ModelIdentity
from culturebias.domain.kobbq.split_check import check_split
from culturebias.domain.kobbq.summary import KoBBQSummary, TemplateScores
from culturebias.testing.context import run_with_fakes
from culturebias.testing.scripted import ScriptedGenerator


@functools.cache
def base() -> KoBBQSummary:
    result = run_with_fakes(
        "kobbq",
        # an always-"A" model is content-blind: its validity rules fail and a split check would compare nothing.
        # These tests exercise the rank-sum machinery on its numbers, so the rules are recorded but off
        # (protocol.validity=off); the test of a not-measured headline below turns them on.
        options={"mode": "generate", "prompts": "1", "limit": 24, "statistics": False, "validity": "off"},
        generator=ScriptedGenerator(lambda request, rendered: "A", name="always-A"),
    )
    assert isinstance(result.summary, KoBBQSummary)
    return result.summary


def shifted(summary: KoBBQSummary, run_id: str, by: float) -> KoBBQSummary:
    """The same run with every template's diff_bias_amb moved by ``by`` (what a different data set might give)."""
    scores = {
        t: TemplateScores(**{**s.model_dump(), "diff_bias_amb": (s.diff_bias_amb or 0.0) + by + 0.01 * i})
        for i, (t, s) in enumerate(summary.details.template_scores.items())
    }
    return summary.model_copy(update={"run_id": run_id, "details": summary.details.model_copy(update={"template_scores": scores})})


def test_the_same_answers_on_both_sets_show_no_difference():
    split = base()
    check = check_split(split, split.model_copy(update={"run_id": "full"}))
    assert check.differing == [] and check.verdict.startswith("The evaluation split gives what the full set gives")
    overall = [r for r in check.scores if r.label_type == "all"]
    assert [r.metric for r in overall] == ["acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis"]
    assert all(r.difference in (0.0, None) for r in check.scores)
    categories = [r for r in check.composition if r.kind == "category"]
    assert categories and all(r.share_split == r.share_full for r in categories)
    assert sum(r.answers_split for r in categories) == check.answers_split == split.counts.answers
    assert check.templates_split == len(split.details.template_scores) and check.only_in_split == []


def test_one_run_given_twice_is_refused_and_no_rank_sum_is_not_read_as_agreement():
    split = base()
    with pytest.raises(ConfigError, match=f"are one run \\({split.run_id}\\)"):
        check_split(split, split)
    empty = split.details.model_copy(update={"template_scores": {t: TemplateScores(**{**s.model_dump(), "acc_amb": None, "acc_dis": None, "diff_bias_amb": None, "diff_bias_dis": None}) for t, s in split.details.template_scores.items()}})
    blank = split.model_copy(update={"details": empty})
    check = check_split(blank, blank.model_copy(update={"run_id": "full"}))
    assert all(r.rank_sum.p_value is None for r in check.scores)
    assert check.verdict.startswith("No rank-sum could be computed") and "gives what the full set gives" not in check.verdict


def test_a_full_set_whose_templates_score_otherwise_is_marked_with_the_rank_sum():
    split = shifted(base(), "split", 0.0)
    full = shifted(base(), "full", 0.6)
    check = check_split(split, full)
    row = next(r for r in check.scores if r.label_type == "all" and r.metric == "diff_bias_amb")
    a = [s.diff_bias_amb for s in split.details.template_scores.values()]
    b = [s.diff_bias_amb for s in full.details.template_scores.values()]
    assert row.rank_sum.p_value == pytest.approx(stats.ranksums(a, b).pvalue) and row.rank_sum.mark in ("**", "***")
    assert "diff_bias_amb (all)" in check.differing and "differs from the full set" in check.verdict


def test_two_models_are_not_checked_against_each_other():
    split = base()
    generator = ModelIdentity(**{**split.model.generator.model_dump(), "model": "another-model"})
    other = split.model_copy(update={"run_id": "full", "model": split.model.model_copy(update={"generator": generator})})
    with pytest.raises(ConfigError, match="different models"):
        check_split(split, other)


def test_a_pooled_full_set_run_is_noted():
    split = base()
    check = check_split(split, split.model_copy(update={"run_id": "full"}))
    assert any("protocol.aggregate=per_template" in note for note in check.notes) == (split.metrics.aggregate == "pooled")


def _write(folder, summary) -> str:
    folder.mkdir()
    (folder / "summary.json").write_text(summary.to_json(), encoding="utf-8")
    return str(folder)


def test_the_command_prints_the_check_and_writes_its_files(tmp_path, capsys):
    split = _write(tmp_path / "split", shifted(base(), "split", 0.0))
    full = _write(tmp_path / "full", shifted(base(), "full", 0.6))
    assert main(["split-check", split, full, "--out", str(tmp_path / "check")]) == 0
    printed = capsys.readouterr().out
    assert "footnote 14" in printed and "differs from the full set" in printed and "written:" in printed
    data = json.loads((tmp_path / "check" / "split_check.json").read_text(encoding="utf-8"))
    assert data["split_run"] == "split" and "diff_bias_amb (all)" in data["differing"]
    assert "| label type | metric |" in (tmp_path / "check" / "split_check.md").read_text(encoding="utf-8")


def test_bad_runs_stop_with_one_line_and_write_nothing(tmp_path, capsys):
    split = _write(tmp_path / "split", base())
    broken = tmp_path / "broken.json"  # a summary file by another name (summary.json files are validated after each test)
    broken.write_text("{not json", encoding="utf-8")
    out = tmp_path / "check"
    assert main(["split-check", split, str(tmp_path / "missing"), "--out", str(out)]) == 3
    assert "missing" in capsys.readouterr().err
    assert main(["split-check", split, str(broken), "--out", str(out)]) == 3
    assert "broken.json" in capsys.readouterr().err
    cbbq = run_with_fakes("cbbq", options={"mode": "generate", "categories": "gender", "limit": 4},
                          generator=ScriptedGenerator(lambda request, rendered: "A"))
    cbbq_file = _write(tmp_path / "cbbq", cbbq.summary)
    assert main(["split-check", split, cbbq_file, "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert "is a cbbq run" in err and "cbbq" in err and err.count("\n") == 1
    assert not out.exists()


def test_a_headline_not_measured_in_either_run_is_null_with_its_reason_never_compared():
    from culturebias.domain.validity import RuleResult, ValidityBlock

    split = base()
    failed = RuleResult(rule="position_dominance", guards=["diff_bias_amb", "diff_bias_dis"], statistic=1.0,
                        threshold=0.8, n=120, passed=False,
                        reason="the most-chosen position takes 1.00 of the answers")
    full = split.model_copy(update={"run_id": "full", "validity": ValidityBlock(enabled=True, results=[failed])})
    check = check_split(split, full)
    blocked = [r for r in check.scores if r.metric.startswith("diff_bias")]
    assert blocked and all(r.split is None and r.full is None and r.difference is None for r in blocked)
    assert all(r.rank_sum.p_value is None and "full set run" in (r.not_measured or "") for r in blocked)
    assert all("position_dominance" in (r.not_measured or "") for r in blocked)
    assert all(r.not_measured is None for r in check.scores if r.metric.startswith("acc"))
    assert "diff_bias_amb" not in check.differing and any("not measured" in n for n in check.notes)
    from culturebias.adapters.reports.kobbq_split_report import split_check_text

    text = split_check_text(check)
    assert "not measured (the full set run: position_dominance" in text
    table_rows = [line for line in text.splitlines() if line.startswith("|") and "diff-bias" in line.lower()]
    assert table_rows == []  # no numbers shown for a headline that was not measured
