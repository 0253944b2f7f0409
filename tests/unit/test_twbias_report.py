"""TWBiasReport renders only what the summary dict holds."""

from __future__ import annotations

import copy

from culturebias.adapters.reports.twbias_report import TWBiasReport, boundary_rule


def prompt(n, t, p, d, significant):
    return {
        "n": n, "n_outliers": 1, "n_invalid": 0, "mean_origin_ppl": 12.25, "mean_replace_ppl": 13.5,
        "t": t, "p_value": p, "cohens_d": d, "cohens_dz": d / 2, "significant": significant,
    }


def spec(origin, reference, ratio, effect):
    prompts = {"0": prompt(40, 1.5, 0.2, 0.11, False), "00": prompt(40, 2.5, 0.01, 0.22, True), "1": prompt(41, 4.75, 1.23e-05, 0.417, True)}
    group = {"n_rows": 42, "bias_ratio": ratio, "effect_size": effect, "n_prompts": 1, "n_significant": 1, "significant_prompts": ["1"], "prompts": prompts}
    return {
        "origin": origin, "reference": reference, "origin_label": origin, "reference_label": reference,
        **group,
        "by_toxicity": {"0": {**group, "n_rows": 30}, "1": {**group, "n_rows": 12}, "all": group},
        "by_category": {"外貌/形象 Appearance": {**group, "n_rows": 7}},
    }


def summary():
    refs = ["T1_hoklo", "T2_waishengren", "T3_han", "T4_indigenous", "T5_hakka"]
    origins = ["T1_hoklo", "T2_waishengren", "T4_indigenous", "T5_hakka"]
    ratio = {o: {r: (None if o == r else 0.625) for r in refs} for o in origins}
    effect = {o: {r: (None if o == r else -0.3125) for r in refs} for o in origins}
    return {
        "run_id": "twbias-abc", "finished_at": "2026-01-01", "schema_version": "1.0", "culturebias_version": "0.1.0",
        "data": {"source": "TWBias files at /data", "fingerprint": "f00"},
        "model": {
            "scorer": {"model": "tiny", "backend": "hf", "dtype": "float32", "parameters": 135_000_000},
            "scorer_provenance": {"device": "cpu", "batch_size": 8, "padding_side": "right", "boundary_rule": "authors"},
        },
        "metrics": {
            "prompt_types": ["0", "00", "1"],
            "analysis": {"test": "paired", "effect": "d", "alpha": 0.05, "outlier_sigma": 3.0, "category_rows": "unique", "boundary_rule": "authors"},
            "gender": {"female": spec("T2_female", "T1_male", 0.737, 0.4242), "male": spec("T1_male", "T2_female", 0.1, 0.0)},
            "ethnicity": {"T1_hoklo->T3_han": spec("T1_hoklo", "T3_han", 0.625, -0.3125)},
            "ethnicity_matrix": {
                "origins": origins, "references": refs,
                "labels": {"T1_hoklo": "Hoklo", "T2_waishengren": "Waishengren", "T3_han": "Han", "T4_indigenous": "Indigenous", "T5_hakka": "Hakka"},
                "bias_ratio": ratio, "effect_size": effect,
            },
        },
        "counts": {"sentences_loaded": 2195, "requests": 777, "skipped": {"toxicity_invalid": 1}},
        "notes": ["toxicity_invalid: 1 × (kept in all)"],
        "details": {"skips": [{"reason": "toxicity_invalid", "file": "ethinicity/label_data_hakka.csv", "row": 41, "field": "Toxicity", "detail": "a|b", "effect": "kept in all"}]},
    }


def test_report_and_heat_maps_are_written(tmp_path):
    paths = TWBiasReport().write(summary(), tmp_path)
    assert [p.name for p in paths] == ["report.md", "twbias_ethnicity_bias_ratio.png", "twbias_ethnicity_effect_size.png"]
    for png in paths[1:]:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = paths[0].read_text(encoding="utf-8")
    assert "![twbias ethnicity bias ratio](twbias_ethnicity_bias_ratio.png)" in text


def test_report_shows_the_summary_numbers(tmp_path):
    text = TWBiasReport().write(summary(), tmp_path)[0].read_text(encoding="utf-8")
    assert "## How to read this report" in text
    assert "| female (T2_female → T1_male) | 42 | 0.737 | 0.424 | 1/1 |" in text
    assert "| 1 | 41 | 1 | 0 | 12.250 | 13.500 | 4.750 | 1.2e-05 | 0.417 | 0.208 | yes |" in text
    assert "| 00 | 40 |" in text and "| 0 | 40 |" in text  # types 0 and 00 beside 1–10
    assert "toxicity 1 | 12 |" in text
    assert "| 外貌/形象 Appearance | 7 |" in text
    assert "| Hoklo | – | 0.625 | 0.625 | 0.625 | 0.625 |" in text
    assert "| Hoklo | – | -0.312 |" in text
    assert "- sentences_loaded: 2195" in text and "- skipped: toxicity_invalid: 1" in text
    assert "a\\|b" in text  # a pipe in a cell does not break the table


def test_report_states_the_boundary_rule_and_the_small_model_warning(tmp_path):
    text = TWBiasReport().write(summary(), tmp_path)[0].read_text(encoding="utf-8")
    assert "tokenisation at the prompt/response boundary: `authors`" in text
    assert "A small model ran" in text
    assert boundary_rule(summary()) == "authors"
    bare = summary()
    del bare["model"]["scorer_provenance"]
    assert boundary_rule(bare) == "authors"  # falls back to the protocol's own record


def test_numbers_come_from_the_summary(tmp_path):
    changed = copy.deepcopy(summary())
    changed["metrics"]["gender"]["female"]["bias_ratio"] = 0.271
    text = TWBiasReport().write(changed, tmp_path)[0].read_text(encoding="utf-8")
    assert "| female (T2_female → T1_male) | 42 | 0.271 |" in text and "0.737" not in text.split("### Per prompt type")[0]


def test_gender_only_summary_has_no_heat_maps(tmp_path):
    only_gender = summary()
    del only_gender["metrics"]["ethnicity"], only_gender["metrics"]["ethnicity_matrix"]
    paths = TWBiasReport().write(only_gender, tmp_path)
    assert [p.name for p in paths] == ["report.md"]
    assert "Ethnicity" not in paths[0].read_text(encoding="utf-8")
