"""TWBias and LIBRA across models: every cell is the runs' summary value, side by side."""

from __future__ import annotations

import functools

import pytest

from culturebias.testing.scripted import ScriptedScorer
from culturebias.domain.libra.comparison import compare_libra
from culturebias.domain.libra.summary import LibraSummary
from culturebias.domain.twbias.comparison import compare_twbias
from culturebias.domain.twbias.summary import TWBiasSummary
from culturebias.testing.context import run_with_fakes

REFS = ["T1_hoklo", "T2_waishengren", "T3_han", "T4_indigenous", "T5_hakka"]
ORIGINS = ["T1_hoklo", "T2_waishengren", "T4_indigenous", "T5_hakka"]


def prompt(p: float, dz: float) -> dict:
    return {
        "n": 40, "n_outliers": 1, "n_invalid": 0, "mean_origin_ppl": 12.0, "mean_replace_ppl": 13.0,
        "t": -2.0, "p_value": p, "cohens_d": dz / 2, "cohens_dz": dz, "significant": p < 0.05,
    }


def group(ratio: float, effect: float, p: float) -> dict:
    prompts = {"0": prompt(0.5, 0.1), "1": prompt(p, effect), "2": prompt(0.2, 0.05)}
    significant = [t for t in ("1", "2") if prompts[t]["significant"]]
    return {"n_rows": 40, "bias_ratio": ratio, "effect_size": effect, "n_prompts": 2,
            "n_significant": len(significant), "significant_prompts": significant, "prompts": prompts}


def spec(origin: str, reference: str, ratio: float, effect: float, p: float, category: str = "外貌 Appearance") -> dict:
    block = group(ratio, effect, p)
    return {
        "origin": origin, "reference": reference, "origin_label": origin, "reference_label": reference,
        "sentences_file": "gender/label_data_female.csv", "term_pairs": 4, "rows_without_origin_term": 0, **block,
        "by_toxicity": {"0": block, "1": block, "all": block},
        "by_category": {category: {**block, "n_rows": 7}},
    }


def twbias(run_id: str, model: str, ratio: float, effect: float, p: float, ethnicity: bool = True) -> TWBiasSummary:
    metrics: dict = {
        "prompt_types": ["0", "1", "2"],
        "analysis": {"test": "paired", "effect": "dz", "alpha": 0.05, "outlier_sigma": 3.0, "category_rows": "unique",
                     "boundary_rule": None},
        "gender": {"female": spec("T2_female", "T1_male", ratio, effect, p), "male": spec("T1_male", "T2_female", 0.0, 0.0, 0.6)},
    }
    if ethnicity:
        metrics["ethnicity"] = {"T1_hoklo->T3_han": spec("T1_hoklo", "T3_han", ratio, -effect, p)}
        metrics["ethnicity_matrix"] = {
            "origins": ORIGINS, "references": REFS, "labels": {k: k.split("_")[1] for k in REFS},
            "bias_ratio": {o: {r: (None if o == r else ratio) for r in REFS} for o in ORIGINS},
            "effect_size": {o: {r: (None if o == r else effect) for r in REFS} for o in ORIGINS},
        }
    return TWBiasSummary.model_validate({
        "benchmark": "twbias", "run_id": run_id, "created_at": "2026-01-01", "finished_at": "2026-01-01",
        "schema_version": "2.0", "culturebias_version": "0.1.0",
        "data": {"source": "TWBias files", "fingerprint": "f00"},
        "config": {}, "config_fingerprint": "c0",
        "model": {"scorer": {"model": model, "backend": "hf"}},
        "metrics": metrics,
        "counts": {"sentences_loaded": 80, "sentences_evaluated": 80, "specifications": 3, "requests": 10,
                   "outliers_removed": 2, "skipped": {}},
        "details": {"sentence_sets": {}, "prompts": {"0": None, "1": "一", "2": "二"}, "skips": []},
    })


def test_twbias_table4_prompts_categories_and_matrices_side_by_side():
    a, b = twbias("r1", "taide", 0.5, 0.136, 0.001), twbias("r2", "breeze", 0.1, 0.085, 0.3)
    body, notes = compare_twbias(["taide", "breeze"], [a, b])
    assert notes == []
    assert list(body.specifications) == ["gender/female", "gender/male", "ethnicity/T1_hoklo->T3_han"]
    female = body.specifications["gender/female"]
    assert (female.headline["taide"].bias_ratio, female.headline["taide"].effect_size) == (0.5, 0.136)
    assert female.headline["breeze"].bias_ratio == 0.1
    assert female.prompts["1"]["taide"] == a.metrics.gender["female"].prompts["1"]  # type: ignore[index]
    assert female.prompts["1"]["breeze"].p_value == 0.3
    assert list(female.prompts) == ["0", "1", "2"]
    assert female.by_category["外貌 Appearance"]["breeze"].n_rows == 7
    assert set(female.by_toxicity) == {"0", "1", "all"}
    assert body.specifications["ethnicity/T1_hoklo->T3_han"].headline["taide"].effect_size == -0.136
    assert body.ethnicity_matrices["breeze"] == b.metrics.ethnicity_matrix


def test_twbias_notes_a_specification_one_model_lacks_and_different_analyses():
    a = twbias("r1", "taide", 0.5, 0.136, 0.001)
    b = twbias("r2", "breeze", 0.1, 0.085, 0.3, ethnicity=False)
    b = b.model_copy(update={"metrics": b.metrics.model_copy(update={"analysis": b.metrics.analysis.model_copy(update={"test": "welch"})})})
    body, notes = compare_twbias(["taide", "breeze"], [a, b])
    assert any("ethnicity/T1_hoklo->T3_han was not evaluated by breeze" in n for n in notes)
    assert any("analyses differ" in n for n in notes)
    assert list(body.ethnicity_matrices) == ["taide"]
    assert list(body.specifications["ethnicity/T1_hoklo->T3_han"].headline) == ["taide"]


@functools.cache
def libra(name: str, per_char: float) -> LibraSummary:
    result = run_with_fakes(
        "libra", options={"knowledge_boundary": "off"}, scorer=ScriptedScorer(lambda c, x: -per_char * len(x) - (x[0] == "M"), name=name)
    )
    assert isinstance(result.summary, LibraSummary)
    return result.summary


def test_libra_table1_columns_overall_and_per_category(costly):
    a, b = libra("short", 1.0), libra("long", 2.0)
    body, notes = compare_libra(["short", "long"], [a, b])
    assert notes == [] and body.columns == ["lms", "ss", "icat_local", "stereoset_icat", "jsd", "bbs", "eicat"]
    assert body.overall["short"] == a.metrics.overall
    # No StereoSet file in the data folder: the paper's iCAT column is empty, the theoretical LMs come along.
    assert body.stereoset_icat == {"short": None, "long": None}
    assert [r.name for r in body.reference_rows] == ["RandomLM", "IdealLM", "LocalIdealLM", "StereotypedLM"]
    assert body.model_type == {"short": "causal", "long": "causal"}
    assert body.categories == sorted(a.metrics.by_category)
    category = body.categories[0]
    assert body.by_category[category]["long"] == b.metrics.by_category[category]


def test_libra_notes_masked_against_causal():
    a = libra("short", 1.0)
    masked = a.model_copy(update={"metrics": a.metrics.model_copy(update={"model_type": "masked"})})
    _, notes = compare_libra(["causal", "masked"], [a, masked])
    assert any("not comparable" in n for n in notes)


@pytest.mark.parametrize("missing", ["gender", None])
def test_twbias_without_gender_still_compares(missing):
    a = twbias("r1", "taide", 0.5, 0.136, 0.001)
    if missing:
        a = a.model_copy(update={"metrics": a.metrics.model_copy(update={"gender": None})})
    body, _ = compare_twbias(["taide", "self"], [a, a.model_copy(update={"run_id": "r3"})])
    assert ("gender/female" in body.specifications) is (missing is None)


def test_twbias_report_has_table4_p_values_and_figures(tmp_path):
    from culturebias.testing.benchmarks import comparer, comparison_report
    from culturebias.application.compare import compare_summaries

    a, b = twbias("r1", "taide", 0.5, 0.136, 0.001), twbias("r2", "breeze", 0.1, 0.085, 0.3)
    result = compare_summaries([a, b], comparer("twbias"), out_dir=tmp_path, report=comparison_report("twbias"))
    assert [p.name for p in result.report_paths] == ["comparison.md", "comparison_twbias_p.png", "comparison_twbias_ethnicity.png"]
    report = (tmp_path / "comparison.md").read_text(encoding="utf-8")
    assert "| specification | taide | breeze |" in report
    assert "| gender/female (T2_female → T1_male) | 0.500 / 0.136 | 0.100 / 0.085 |" in report
    assert "| 1 | 0.001 * (d_z 0.136) | 0.300 (d_z 0.085) |" in report
    assert "| 外貌 Appearance | 0.500 / 0.136 | 0.100 / 0.085 |" in report
    assert "### breeze: effect size" in report


def test_libra_report_has_table1_per_model(tmp_path):
    from culturebias.testing.benchmarks import comparer, comparison_report
    from culturebias.application.compare import compare_summaries

    a, b = libra("short", 1.0), libra("long", 2.0)
    compare_summaries([a, b], comparer("libra"), out_dir=tmp_path, report=comparison_report("libra"))
    report = (tmp_path / "comparison.md").read_text(encoding="utf-8")
    o = a.metrics.overall
    # The StereoSet iCAT column stays empty without StereoSet in the data folder ("–").
    assert f"| short | causal | {o.lms:.2f} | {o.ss:.2f} | {o.icat_local:.2f} | – | {o.jsd:.2f} | – | – | {o.valid} | {o.invalid} |" in report
    assert "| RandomLM | theoretical | 66.67 | 50.00 | 66.67 | 66.67 | 0.00 | 0.00 | 0.00 | – | – |" in report
    assert f"### {sorted(a.metrics.by_category)[0]}" in report
