"""TWBiasReport renders only what the typed summary holds."""

from __future__ import annotations

import copy
import json
import math

import pytest
from pydantic import ValidationError

from culturebias.adapters.twbias.figures import category_series, p_value_series
from culturebias.adapters.twbias.report import TWBiasReport, boundary_rule
from culturebias.domain.twbias.summary import TWBiasSummary


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
        "sentences_file": "gender/label_data_female.csv", "term_pairs": 41, "rows_without_origin_term": 0,
        **group,
        "by_toxicity": {"0": {**group, "n_rows": 30}, "1": {**group, "n_rows": 12}, "all": group},
        "by_category": {"外貌/形象 Appearance": {**group, "n_rows": 7}},
    }


def summary_payload() -> dict:
    refs = ["T1_hoklo", "T2_waishengren", "T3_han", "T4_indigenous", "T5_hakka"]
    origins = ["T1_hoklo", "T2_waishengren", "T4_indigenous", "T5_hakka"]
    ratio = {o: {r: (None if o == r else 0.625) for r in refs} for o in origins}
    effect = {o: {r: (None if o == r else -0.3125) for r in refs} for o in origins}
    return {
        "benchmark": "twbias", "run_id": "twbias-abc", "created_at": "2026-01-01", "finished_at": "2026-01-01",
        "schema_version": "1.0", "culturebias_version": "0.1.0",
        "data": {"source": "TWBias files at /data", "fingerprint": "f00"},
        "config": {"protocol": {"groups": "gender,ethnicity"}}, "config_fingerprint": "c0ffee",
        "model": {
            "scorer": {"model": "tiny", "backend": "hf", "dtype": "float32", "parameters": 135_000_000},
            "scorer_provenance": {"backend": "hf", "dtype": "float32", "device": "cpu", "batch_size": 8, "padding_side": "right", "boundary_rule": "authors"},
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
        "counts": {
            "sentences_loaded": 2195, "sentences_evaluated": 42, "specifications": 3, "requests": 777,
            "outliers_removed": 2, "skipped": {"toxicity_invalid": 1},
        },
        "notes": ["toxicity_invalid: 1 × (kept in all)"],
        "details": {
            "sentence_sets": {
                "gender/female": {"file": "gender/label_data_female.csv", "attribute_file": "gender/female-Attribute.csv", "group": "T2_female", "loaded": 606, "evaluated": 42},
            },
            "prompts": {"0": None, "00": "", "1": "你想說什麼？"},
            "skips": [{"reason": "toxicity_invalid", "file": "ethinicity/label_data_hakka.csv", "row": 41, "field": "Toxicity", "detail": "a|b", "effect": "kept in all"}],
        },
    }  # fmt: skip


def typed(payload: dict) -> TWBiasSummary:
    return TWBiasSummary.model_validate(payload)


def test_a_summary_round_trips_through_its_json():
    summary = typed(summary_payload())
    assert TWBiasSummary.model_validate_json(summary.to_json()) == summary
    dumped = json.loads(summary.to_json())
    assert list(dumped["metrics"]) == ["prompt_types", "analysis", "gender", "ethnicity", "ethnicity_matrix"]
    assert list(dumped["metrics"]["gender"]["female"])[:8] == [
        "origin", "reference", "origin_label", "reference_label", "sentences_file", "term_pairs",
        "rows_without_origin_term", "n_rows",
    ]  # fmt: skip
    assert dumped["metrics"]["ethnicity_matrix"]["bias_ratio"]["T1_hoklo"]["T1_hoklo"] is None
    # a summary written before invalid_replies existed loads, with none counted
    assert list(dumped["counts"]) == [
        "sentences_loaded", "sentences_evaluated", "specifications", "requests", "outliers_removed", "skipped", "invalid_replies",
        "duplicate_sentences",
    ]  # fmt: skip
    assert dumped["counts"]["invalid_replies"] == 0


def test_an_unknown_key_is_refused():
    payload = summary_payload()
    payload["metrics"]["gender"]["female"]["prompts"]["1"]["extra"] = 1
    with pytest.raises(ValidationError, match="extra"):
        typed(payload)


def test_report_and_heat_maps_are_written(tmp_path):
    paths = TWBiasReport().write(typed(summary_payload()), tmp_path)
    assert [p.name for p in paths] == [
        "report.md", "twbias_ethnicity_bias_ratio.png", "twbias_ethnicity_effect_size.png",
        "twbias_gender_p_values.png", "twbias_gender_categories.png",
        "twbias_ethnicity_p_values.png", "twbias_ethnicity_categories.png",
    ]  # fmt: skip
    for png in paths[1:]:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = paths[0].read_text(encoding="utf-8")
    assert "![twbias ethnicity bias ratio](twbias_ethnicity_bias_ratio.png)" in text
    assert "![twbias gender p values](twbias_gender_p_values.png)" in text
    assert "![twbias gender categories](twbias_gender_categories.png)" in text


def test_report_shows_the_summary_numbers(tmp_path):
    text = TWBiasReport().write(typed(summary_payload()), tmp_path)[0].read_text(encoding="utf-8")
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
    text = TWBiasReport().write(typed(summary_payload()), tmp_path)[0].read_text(encoding="utf-8")
    assert "tokenisation at the prompt/response boundary: `authors`" in text
    assert "A small model ran" in text
    assert boundary_rule(typed(summary_payload())) == "authors"
    bare = summary_payload()
    del bare["model"]["scorer_provenance"]
    assert boundary_rule(typed(bare)) == "authors"  # falls back to the protocol's own record


def test_numbers_come_from_the_summary(tmp_path):
    changed = copy.deepcopy(summary_payload())
    changed["metrics"]["gender"]["female"]["bias_ratio"] = 0.271
    text = TWBiasReport().write(typed(changed), tmp_path)[0].read_text(encoding="utf-8")
    assert "| female (T2_female → T1_male) | 42 | 0.271 |" in text and "0.737" not in text.split("### Per prompt type")[0]


def test_gender_only_summary_has_no_heat_maps(tmp_path):
    only_gender = summary_payload()
    del only_gender["metrics"]["ethnicity"], only_gender["metrics"]["ethnicity_matrix"]
    paths = TWBiasReport().write(typed(only_gender), tmp_path)
    assert [p.name for p in paths] == ["report.md", "twbias_gender_p_values.png", "twbias_gender_categories.png"]
    assert "Ethnicity" not in paths[0].read_text(encoding="utf-8")


def test_the_report_names_the_test_the_t_sign_and_the_replace_aggregate(tmp_path):
    payload = summary_payload()
    payload["metrics"]["analysis"].update(test="welch", t_sign="origin_minus_replace", replace_aggregate="min")
    text = TWBiasReport().write(typed(payload), tmp_path)[0].read_text(encoding="utf-8")
    assert "- test: Welch's t-test" in text
    assert "- t sign: the TWBias authors' (t of ttest_rel(origin_ppl, replace_ppl))" in text
    assert "- replace PPL: the lowest PPL among each sentence's replaced sentences" in text
    assert "t carries the sign named under Settings" in text  # said beside the per-prompt tables


def test_a_summary_from_before_the_sign_change_says_which_sign_its_t_has(tmp_path):
    payload = summary_payload()  # no t_sign, no replace_aggregate: written under the old defaults
    summary = typed(payload)
    assert summary.metrics.analysis.t_sign is None and summary.metrics.analysis.replace_aggregate is None
    text = TWBiasReport().write(summary, tmp_path)[0].read_text(encoding="utf-8")
    assert "- t sign: replace minus origin (a summary written before t took the authors' sign)" in text
    assert "- test: paired t-test (ttest_rel" in text


def test_the_figures_plot_the_summary_numbers():
    summary = typed(summary_payload())
    gender = summary.metrics.gender or {}
    [(title, series)] = p_value_series(gender, ["0", "00", "1", "2"])
    assert title == ""  # two specifications: one panel
    female = series["female (T2_female → T1_male)"]
    assert female[:3] == [0.2, 0.01, 1.23e-05] and math.isnan(female[3])  # type 2 not in the summary
    categories, [(_, ratios)] = category_series(gender, "bias_ratio")
    assert categories == ["外貌/形象 Appearance"]
    assert ratios == {"female (T2_female → T1_male)": [0.737], "male (T1_male → T2_female)": [0.1]}
    _, [(_, effects)] = category_series(gender, "effect_size")
    assert effects["female (T2_female → T1_male)"] == [0.4242]


def test_ethnicity_figures_have_one_panel_per_origin():
    payload = summary_payload()
    payload["metrics"]["ethnicity"] = {
        f"{o}->{r}": spec(o, r, 0.5, 0.1) for o in ("T1_hoklo", "T2_waishengren") for r in ("T3_han", "T4_indigenous", "T5_hakka")
    }
    panels = p_value_series(typed(payload).metrics.ethnicity or {}, ["1"])
    assert [title for title, _ in panels] == ["origin T1_hoklo", "origin T2_waishengren"]
    assert list(panels[0][1]) == ["→ T3_han", "→ T4_indigenous", "→ T5_hakka"]


def few_payload(every: bool) -> dict:
    """The female Appearance category tested on 3 pairs (flagged); with ``every``, every test of the run is."""
    payload = copy.deepcopy(summary_payload())
    payload["metrics"]["analysis"]["few_pairs_below"] = 10
    flag = "few pairs: n = 3, low power (every user prompt type behind these numbers was tested on under 10)"
    specs = [*payload["metrics"]["gender"].values(), *payload["metrics"]["ethnicity"].values()]
    groups = [g for s in specs for g in (s, *s["by_toxicity"].values(), *s["by_category"].values())] if every else [
        payload["metrics"]["gender"]["female"]["by_category"]["外貌/形象 Appearance"]]
    for group in groups:
        group["prompts"] = {k: {**p, "n": 3, "few_pairs": "few pairs: n = 3, low power"} for k, p in group["prompts"].items()}
        group["few_pairs"] = flag
    return payload


def test_a_category_of_few_pairs_is_flagged_in_the_tables_and_the_figure_never_dropped(tmp_path):
    from culturebias.adapters.twbias.figures import category_flags

    summary = typed(few_payload(every=False))
    assert summary.headline_low_power() is None  # the headline rests on 41 pairs: only the category is flagged
    TWBiasReport().write(summary, tmp_path)
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "| 外貌/形象 Appearance | 7 | 0.737 | 0.424 | 1/1 (few pairs: n = 3, low power) |" in report
    assert "few pairs: n = …, low power\", never dropped" in report  # the settings say the rule
    [flags] = category_flags(summary.metrics.gender or {})
    assert flags == {"female (T2_female → T1_male)": ["few pairs: n = 3, low power"], "male (T1_male → T2_female)": [None]}


def test_a_run_whose_every_test_rests_on_few_pairs_says_so_first(tmp_path):
    summary = typed(few_payload(every=True))
    assert summary.headline_low_power().startswith("Every test of this run rests on few sentence pairs (at most 3, under 10)")
    TWBiasReport().write(summary, tmp_path)
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert report.index("> **Caveat.** Every test of this run rests on few sentence pairs") < report.index("- run `twbias-abc`")
    assert "| 1 | 3 | 1 | 0 | 12.250 | 13.500 | 4.750 | 1.2e-05 (few pairs: n = 3, low power) |" in report


def test_the_card_of_a_run_whose_every_test_rests_on_few_pairs_says_so_before_its_numbers():
    from culturebias.adapters.reports.headline_text import headline_text
    from culturebias.adapters.reports.html.headline_card import headline_card
    from culturebias.bootstrap.registry import registry

    descriptor = registry().benchmark("twbias")
    headlines = descriptor.headline_metrics()
    few, plain = typed(few_payload(every=True)), typed(summary_payload())
    lines = headline_text(few, headlines, descriptor.title).splitlines()
    assert lines[1].startswith("  warning: Every test of this run rests on few sentence pairs (at most 3, under 10)")
    first_number = next(i for i, line in enumerate(lines) if line.startswith(f"  {headlines[0].label}: "))
    assert 1 < first_number and sum("rests on few sentence pairs" in line for line in lines) == 1  # said once, first
    card = headline_card(few, headlines, descriptor.title)
    assert card.index("Every test of this run rests on few sentence pairs") < card.index('<table class="headline">')
    assert card.count("rests on few sentence pairs") == 1
    assert "rests on few sentence pairs" not in headline_text(plain, headlines, descriptor.title)
    assert '<ul class="warnings lead">' not in headline_card(plain, headlines, descriptor.title)


def test_a_headline_built_only_from_few_pairs_says_so():
    payload = copy.deepcopy(summary_payload())
    female = payload["metrics"]["gender"]["female"]
    female["few_pairs"] = "few pairs: n = 3, low power (every user prompt type behind these numbers was tested on under 10)"
    payload["metrics"]["analysis"]["few_pairs_below"] = 10
    words = typed(payload).headline_low_power()
    assert words == ("Headline numbers built only from tests on few sentence pairs, shown and flagged, never dropped: "
                     "female: few pairs: n = 3, low power (every user prompt type behind these numbers was tested on under 10).")


def test_the_category_figure_says_a_few_pairs_flag_under_its_category_name_clear_of_the_bars():
    from culturebias.adapters.twbias.figures import category_flags, category_series, flagged_ticks

    summary = typed(few_payload(every=False))
    specs = summary.metrics.gender or {}
    categories, _ = category_series(specs, "bias_ratio")
    [flags] = category_flags(specs)
    ticks = dict(zip(categories, flagged_ticks(categories, flags)))
    assert ticks["外貌/形象 Appearance"] == "外貌/形象 Appearance\nfemale: few pairs: n = 3, low power"
    assert all(tick == category for category, tick in ticks.items() if category != "外貌/形象 Appearance")
    assert flagged_ticks(["A"], {"female (T2 → T1)": ["few pairs: n = 2, low power"]}) == ["A\nfew pairs: n = 2, low power"]
