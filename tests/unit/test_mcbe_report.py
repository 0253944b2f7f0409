"""The McBE report shows the summary's numbers, the judge's size, invalid counts and a chart."""

from __future__ import annotations

import re

from culturebias.adapters.mcbe.report import McBEReport
from culturebias.domain.mcbe.summary import McBESummary

SUMMARY = {
    "benchmark": "mcbe",
    "run_id": "mcbe-test",
    "created_at": "2026-01-01T00:00:00+00:00",
    "finished_at": "2026-01-01T00:00:00+00:00",
    "schema_version": "1.0",
    "culturebias_version": "0.1.0",
    "data": {"source": "embedded fixture", "fingerprint": "abc"},
    "model": {
        "generator": {"model": "tiny-model", "backend": "hf", "dtype": "float32", "parameters": 135_000_000},
        "judge": {"model": "tiny-model", "backend": "hf", "dtype": "float32", "parameters": 135_000_000},
    },
    "metrics": {
        "tasks": {"pc": 81.25, "ss": 64.5, "ba": 12.75},
        "overall": 52.83,
        "task_names": {"pc": "preference computation", "ss": "scenario selection", "ba": "bias analysis"},
        "categories": {
            "gender": {"pc": 81.25, "ss": 64.5, "ba": 20.5, "mean": 55.42, "name_zh": "性别", "n_beis": 5,
                       "invalid": {"ss_unparseable": 7, "ba_judge_invalid": 2}},
            "worldview": {"pc": None, "ss": None, "ba": 5.0, "mean": 5.0, "name_zh": "世界观", "n_beis": 4,
                          "invalid": {"ss_unparseable": 0, "ba_judge_invalid": 1}},
        },
        "decay": {"pc": {"choice": "paper", "rate": 1.8121878856}, "ss": {"choice": "released", "rate": 0.1568099}},
        "preference_skip": ["worldview"],
        "judge": {"model": "tiny-model", "backend": "hf", "parameters": 135_000_000, "is_evaluated_model": True,
                  "max_retries": 3},
    },
    "counts": {
        "beis": 9, "categories": 2, "ss_asked": 26, "ss_unparseable": 7, "ba_judge_requests": 36, "ba_judge_invalid": 3,
    },
    "notes": ["worldview skipped by PC and SS"],
    "config": {},
    "config_fingerprint": "cfg",
    "details": {"items": {}, "subcategories": {}},
}


def typed(summary: dict) -> McBESummary:
    return McBESummary.model_validate(summary)


def test_report_shows_summary_numbers_judge_and_chart(tmp_path):
    paths = McBEReport().write(typed(SUMMARY), tmp_path)
    assert [p.name for p in paths] == ["report.md", "mcbe_scores.png"]
    assert paths[1].stat().st_size > 1000
    text = paths[0].read_text(encoding="utf-8")
    assert "Overall score: **52.83**" in text
    assert "| gender (性别) | 5 | 81.25 | 64.50 | 20.50 | 55.42 |" in text
    assert "| worldview (世界观) | 4 | – | – | 5.00 | 5.00 |" in text
    assert "| **all categories** | 9 | 81.25 | 64.50 | 12.75 | 52.83 |" in text
    assert "`tiny-model` via `hf` (135M parameters), the evaluated model itself" in text
    assert "This judge is small (135M parameters)" in text
    assert "| SS answers naming neither or both of A/B | 7 | 26 |" in text
    assert "| gender | 7 | 2 |" in text
    assert "r = 1.8122, `paper` constant" in text and "r = 0.1568, `released` constant" in text
    assert "![McBE scores by category and task](mcbe_scores.png)" in text


def test_every_table_number_comes_from_the_summary(tmp_path):
    text = McBEReport().write(typed(SUMMARY), tmp_path)[0].read_text(encoding="utf-8")
    allowed = set()

    def collect(value):
        if isinstance(value, dict):
            for v in value.values():
                collect(v)
        elif isinstance(value, list):
            for v in value:
                collect(v)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            allowed.update({str(value), f"{value:.2f}", f"{value:.3f}", f"{value:.4f}", f"{value / 1e6:.0f}M"})

    collect(SUMMARY)
    table_numbers = re.findall(r"(?<=\| )-?\d+(?:\.\d+)?M?(?= \|)", text)
    assert table_numbers
    assert [n for n in table_numbers if n not in allowed] == []


def test_report_without_judge_or_invalid_replies(tmp_path):
    metrics = {key: value for key, value in SUMMARY["metrics"].items() if key != "judge"}
    summary = {**SUMMARY, "metrics": metrics, "counts": {"beis": 9, "categories": 1}}
    summary["metrics"]["categories"] = {
        "gender": {**SUMMARY["metrics"]["categories"]["gender"], "invalid": {}},
    }
    text = McBEReport().write(typed(summary), tmp_path)[0].read_text(encoding="utf-8")
    assert "bias-analysis judge" not in text
    assert "No reply was invalid, unparseable or clamped." in text


def test_parameter_counts_read_plainly():
    from culturebias.adapters.mcbe.report import parameter_count

    assert parameter_count(135_000_000) == "135M parameters"
    assert parameter_count(1_700_000_000) == "1.7B parameters"
    assert parameter_count(245_312) == "245,312 parameters"
    assert parameter_count(None) == "unknown size"


def test_each_categorys_intervals_over_its_own_beis_follow_the_scores_table(tmp_path):
    import copy

    payload = copy.deepcopy(SUMMARY)
    interval = {"n": 5, "unit": "instance (BEI)", "method": "BCa", "resamples": 200, "seed": 0}
    payload["metrics"]["categories"]["gender"]["intervals"] = {
        "pc": {**interval, "low": 70.0, "high": 90.5}, "ss": {**interval, "low": 50.0, "high": 75.0},
        "ba": {**interval, "low": 10.0, "high": 30.0}, "mean": {**interval, "low": 48.0, "high": 62.25},
    }
    text = McBEReport().write(typed(payload), tmp_path)[0].read_text(encoding="utf-8")
    assert "| gender (性别) | 5 | 81.25 | 64.50 | 20.50 | 55.42 |" in text  # the paper's table stays values only
    assert "### Intervals by category" in text
    assert "| gender (性别) | [70.00, 90.50] | [50.00, 75.00] | [10.00, 30.00] | [48.00, 62.25] | 5 |" in text
    assert "| worldview" not in text.split("### Intervals by category")[1].split("\n\n")[1]  # no intervals: no row
    assert "### Intervals by category" not in McBEReport().write(typed(SUMMARY), tmp_path / "plain")[0].read_text(encoding="utf-8")
