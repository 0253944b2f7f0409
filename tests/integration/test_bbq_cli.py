"""``culturebias run kobbq|cbbq`` end to end: replay files, summary.json keys, report, bad replay input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from culturebias.adapters.cbbq.files import CBBQFiles
from culturebias.adapters.kobbq.files import KoBBQFiles
from culturebias.bootstrap.cli import main
from culturebias.domain.bbq.answer_order import shown_order
from culturebias.domain.kobbq.summary import KoBBQSummary
from culturebias.domain.cbbq.summary import CBBQSummary

METRICS = ("acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis", "ooc_ratio")


def kobbq_replay(path: Path, prompts=("1", "2"), permutations=(0, 1, 2), limit=None, drop: str | None = None) -> Path:
    """Biased answers, written the ways people write them (letters, texts, "정답은 …")."""
    items = KoBBQFiles(None).load().items[:limit]
    styles = [lambda letter, text: letter, lambda letter, text: f"{letter}: {text}", lambda letter, text: f"정답은 {letter}입니다."]
    with path.open("w", encoding="utf-8") as handle:
        for n, item in enumerate(items):
            for prompt in prompts:
                for k in permutations:
                    if item.sample_id == drop and prompt == prompts[-1] and k == permutations[-1]:
                        continue
                    position = shown_order(3, k).index(item.biased_index)
                    letter = ("abc" if prompt in ("3", "4") else "ABC")[position]
                    raw = styles[n % 3](letter, item.options[item.biased_index])
                    record = {"sample_id": item.sample_id, "prompt_id": int(prompt), "permutation": k, "raw": raw}
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def run(out: Path, *assignments: str) -> int:
    args = ["run", out.name.split("_")[0], "--out", str(out), "--set", "run.progress=false"]
    for assignment in assignments:
        args += ["--set", assignment]
    return main(args)


def test_kobbq_replay_run_writes_the_documented_summary_and_report(tmp_path):
    replay = kobbq_replay(tmp_path / "answers.jsonl", limit=48)
    out = tmp_path / "kobbq_out"
    code = run(
        out,
        "model.backend=replay",
        f"model.path={replay}",
        "protocol.prompts=1,2",
        "protocol.limit=48",
        "protocol.statistics=false",
    )
    assert code == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert KoBBQSummary.model_validate(summary).as_dict() == summary
    metrics = summary["metrics"]
    assert metrics["mode"] == "generate" and metrics["prompts"] == ["1", "2"]
    expected = {"acc_amb": 0.0, "acc_dis": 0.5, "diff_bias_amb": 1.0, "diff_bias_dis": 1.0, "ooc_ratio": 0.0}
    for key in METRICS:
        assert metrics["overall"][key]["mean"] == expected[key]
        assert metrics["overall"][key]["std"] == 0.0
        assert set(metrics["overall"][key]["per_prompt"]) == {"1", "2"}
    assert set(metrics["by_label"]) == {"ST"}
    assert set(metrics["by_category"]) == {"age"}
    assert all(key in metrics["by_category"]["age"] for key in METRICS)
    assert summary["counts"]["answers"] == 48 * 2 * 3 and summary["counts"]["out_of_choice"] == 0
    assert summary["model"]["generator"]["backend"] == "replay"
    assert len(summary["details"]["predictions"]) == 288
    report = (out / "report.md").read_text(encoding="utf-8")
    assert (out / "bbq_bias.png").is_file()
    assert "| Diff-bias (ambiguous) | 1.000 | 0.000 | 1.000 | 1.000 |" in report
    assert "## How to read this report" in report


def test_a_replay_file_missing_an_answer_fails_naming_the_first_missing_key(tmp_path, capsys):
    replay = kobbq_replay(tmp_path / "answers.jsonl", limit=12, drop="age-001a-002-dis-cnt")
    out = tmp_path / "kobbq_missing"
    code = run(out, "model.backend=replay", f"model.path={replay}", "protocol.prompts=1,2", "protocol.limit=12")
    assert code == 3  # input data
    error = capsys.readouterr().err
    assert "no answer for sample_id='age-001a-002-dis-cnt', prompt_id='2', permutation=2" in error
    assert not (out / "summary.json").exists()


def test_unknown_prompt_ids_and_likelihood_on_replay_are_refused(tmp_path, capsys):
    replay = kobbq_replay(tmp_path / "answers.jsonl", limit=4)
    assert run(tmp_path / "kobbq_a", "model.backend=replay", f"model.path={replay}", "protocol.prompts=1,9") == 2  # configuration
    assert "unknown prompt id(s) ['9']" in capsys.readouterr().err
    assert run(tmp_path / "kobbq_b", "model.backend=replay", f"model.path={replay}", "protocol.mode=likelihood") == 4  # capability
    assert "cannot provide log-likelihood scoring" in capsys.readouterr().err


def test_cbbq_replay_run_names_the_condition_and_counts_unresolved_items(tmp_path):
    data = CBBQFiles(None).load()
    items = [i for i in data.items if i.category in ("gender", "region")]  # unresolved ones are asked too
    path = tmp_path / "cbbq_answers.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for item in items:
            chosen = item.unknown_index if item.ambiguous else item.biased_index
            letter = "ABC"[shown_order(3, 0).index(chosen)]
            handle.write(json.dumps({"sample_id": item.sample_id, "prompt_id": "q_if", "permutation": 0, "raw": f"答案是{letter}"}) + "\n")
    out = tmp_path / "cbbq_out"
    code = run(out, "model.backend=replay", f"model.path={path}", "protocol.condition=q_if", "protocol.categories=gender,region")
    assert code == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert CBBQSummary.model_validate(summary).as_dict() == summary
    metrics = summary["metrics"]
    assert metrics["condition"] == "q_if" and metrics["condition_name"] == "Q+IF"
    assert (metrics["weights"]["w1"], metrics["weights"]["w2"]) == (0.4, 0.6)
    assert "w2 > w1" in metrics["weights"]["source"]
    overall = metrics["overall"]
    assert (overall["s_amb"], overall["s_dis"], overall["acc_amb"], overall["acc_dis"]) == (0.0, 1.0, 1.0, 0.0)
    assert overall["s_total"] == pytest.approx(0.6)
    assert set(metrics["by_category"]) == {"gender", "region"}
    assert all(set(c) >= {"s_amb", "s_dis", "s_total", "acc_amb", "acc_dis"} for c in metrics["by_category"].values())
    assert summary["counts"]["biased_answer_unresolved"] == 6  # gender's six; region's resolve from their groups
    assert summary["counts"]["answers"] == len(items)
    assert overall["counts"]["n_amb_unresolved"] == overall["counts"]["n_amb_unresolved_unknown"] == 6
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Q+IF" in report and "| from the label (disambiguated)" in report
    assert "weights' source" in report and "targeted group × stereotype topic" in report


def test_expand_help_lists_every_expanders_keys(capsys):
    assert main(["expand", "--help"]) == 0
    printed = capsys.readouterr().out
    for key in ("versions", "sample", "seed", "categories", "disambiguated_order"):
        assert f"protocol.{key}:" in printed, key
    assert "  kobbq:" in printed and "  cbbq:" in printed


def test_expand_commands(tmp_path, capsys):
    assert main(["expand", "cbbq", "--out", str(tmp_path / "c.jsonl"), "--set", "protocol.categories=disease"]) == 0
    assert "1172 items written" in capsys.readouterr().out
    assert main(["expand", "kobbq", "--out", str(tmp_path / "k.jsonl"), "--set", "protocol.versions=c"]) == 0
    printed = capsys.readouterr().out
    assert "240 items written" in printed and "the paper's Table 1 count, 76,048, is of a full expansion" in printed
    samples = KoBBQFiles(str(tmp_path / "k.jsonl")).load()
    assert len(samples.items) == 240 and not samples.skips
