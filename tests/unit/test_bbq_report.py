"""The BBQ report shows numbers from summary.json only, and copes with undefined (null) metrics."""

from __future__ import annotations

from culturebias.adapters.reports.bbq_report import BBQReport


def cell(mean, std, per_prompt):
    return {"mean": mean, "std": std, "n_prompts": 2, "per_prompt": per_prompt}


def kobbq_summary() -> dict:
    block = {
        "acc_amb": cell(None, None, {"1": None, "2": None}),
        "acc_dis": cell(0.625, 0.125, {"1": 0.5, "2": 0.75}),
        "diff_bias_amb": cell(None, None, {"1": None, "2": None}),
        "diff_bias_dis": cell(0.25, 0.0, {"1": 0.25, "2": 0.25}),
        "ooc_ratio": cell(0.5, 0.0, {"1": 0.5, "2": 0.5}),
        "bounds": {"1": {"diff_bias_amb_bound": None, "diff_bias_dis_bound": 1.0, "diff_bias_amb_within_bound": None, "diff_bias_dis_within_bound": True}},
    }
    return {
        "benchmark": "kobbq",
        "run_id": "kobbq-1",
        "model": {},
        "data": {"source": "bundled", "fingerprint": "f"},
        "metrics": {
            "mode": "generate",
            "prompts": ["1", "2"],
            "permutations": [0],
            "unknown_wording": {"1": "알 수 없음", "2": "보기 중 답을 찾을 수 없음"},
            "overall": block,
            "by_label": {"ST": block},
            "by_category": {"age": block},
            "statistics": {},
        },
        "counts": {"answers": 8, "out_of_choice": 4, "out_of_choice_by_prompt": {"1": 2, "2": 2}},
        "notes": ["a note"],
        "details": {"skips": [{"sample_id": "x-1", "file": "f.tsv", "row": 3, "reason": "why"}]},
    }


def test_kobbq_report(tmp_path):
    paths = BBQReport().write(kobbq_summary(), tmp_path)
    assert [p.name for p in paths] == ["report.md", "bbq_bias.png"]
    text = paths[0].read_text(encoding="utf-8")
    assert "| Acc (disambiguated) | 0.625 | 0.125 | 0.500 | 0.750 |" in text
    assert "| Acc (ambiguous) | – | – | – | – |" in text
    assert "| age | – ± – | 0.625 ± 0.125 |" in text
    assert "| 2 | 보기 중 답을 찾을 수 없음 |" in text
    assert "out_of_choice_by_prompt: 1: 2, 2: 2" in text
    assert "skipped x-1 (f.tsv, row 3): why" in text and "- a note" in text


def test_cbbq_report(tmp_path):
    scores = {"s_amb": 0.25, "s_dis": None, "s_total": None, "acc_amb": 0.75, "acc_dis": 0.0, "ooc_ratio": 0.0}
    summary = {
        "benchmark": "cbbq",
        "model": {},
        "data": {},
        "metrics": {
            "mode": "likelihood",
            "condition": "q_if",
            "condition_name": "Q+IF",
            "conditions": ["q_if"],
            "weights": {"w1": 0.4, "w2": 0.6},
            "overall": scores,
            "by_category": {"gender": scores},
            "by_condition": {"q_if": {"overall": scores, "by_category": {"gender": scores}}},
        },
        "counts": {"biased_answer_derivation": {"label": 10, "twin": 9, "groups": 1, "unresolved": 2}, "biased_answer_unresolved": 2},
    }
    paths = BBQReport().write(summary, tmp_path)
    text = paths[0].read_text(encoding="utf-8")
    assert "| Q+IF | 0.250 | – | – | 0.750 | 0.000 | 0.000 |" in text
    assert "| gender | 0.250 | – | – |" in text
    assert "| 10 | 9 | 1 | 2 |" in text
    assert "S_total = 0.40 · S_amb + 0.60 · S_dis" in text
