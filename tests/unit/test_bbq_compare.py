"""KoBBQ and CBBQ across models: Table 3, Wilcoxon rank-sum, normalised diff-bias and Tukey HSD, the CBBQ table."""

from __future__ import annotations

import functools
import math

import pytest
from scipy import stats

from culturebias.testing.scripted import ScriptedGenerator
from culturebias.domain.cbbq.comparison import compare_cbbq
from culturebias.domain.kobbq.comparison import (
    TESTED_METRICS,
    compare_kobbq,
    normalised,
    rank_sum_row,
    template_sample,
)
from culturebias.domain.kobbq.summary import KoBBQSummary, TemplateScores
from culturebias.domain.cbbq.summary import CBBQSummary
from culturebias.domain.errors import ConfigError
from culturebias.testing.context import run_with_fakes
from culturebias.testing.kobbq_runs import kobbq_run


@functools.cache
def base() -> KoBBQSummary:
    """A real KoBBQ summary (a scripted model always answering "A") whose template scores the tests replace."""
    result = run_with_fakes(
        "kobbq",
        options={"mode": "generate", "prompts": "1", "limit": 3, "statistics": False},
        generator=ScriptedGenerator(lambda request, rendered: "A"),
    )
    assert isinstance(result.summary, KoBBQSummary)
    return result.summary


def scores(amb: float | None, acc_amb: float | None = 0.5, dis: float | None = None, acc_dis: float | None = None) -> TemplateScores:
    return TemplateScores(acc_amb=acc_amb, acc_dis=acc_dis, diff_bias_amb=amb, diff_bias_dis=dis, ooc_ratio=0.0)


def summary(run_id: str, values: list[float | None], template_type=TemplateScores, **extra) -> KoBBQSummary:
    template_scores = {f"t-{i:03d}": template_type(**scores(v).model_dump(), **extra) for i, v in enumerate(values)}
    template = base()
    details = template.details.model_copy(update={"template_scores": template_scores})
    return template.model_copy(update={"run_id": run_id, "details": details})


def test_rank_sum_by_hand():
    # ranks of a = 1, 2, 3 among six values; W = 6, expected 10.5, sd sqrt(3·3·7/12)
    a = template_sample(summary("ko", [0.1, 0.2, 0.3, None]), "diff_bias_amb")
    b = template_sample(summary("mt", [0.4, 0.5, 0.6]), "diff_bias_amb")
    row = rank_sum_row("diff_bias_amb", "all", "ko", "mt", a, b)
    assert row.statistic == pytest.approx(-4.5 / math.sqrt(63 / 12))
    assert (row.n_a, row.n_b, row.a, row.b) == (3, 3, "ko", "mt")
    assert row.p_value == pytest.approx(0.0495346, abs=1e-6)
    assert row.mark == "**"


def test_template_samples_need_template_scores_and_a_known_metric():
    with pytest.raises(ConfigError, match="template_scores"):
        template_sample(summary("x", []), "diff_bias_amb")
    with pytest.raises(ConfigError, match="metric"):
        template_sample(summary("a", [0.1]), "s_amb")


def test_an_empty_sample_has_no_test():
    row = rank_sum_row("acc_amb", "all", "a", "b", [], [0.1])
    assert row.p_value is None and row.mark == ""


@pytest.mark.parametrize(
    ("diff_bias", "accuracy", "metric", "expected"),
    [
        (0.2, 0.6, "diff_bias_amb", 0.5),  # bound 1 - 0.6
        (-0.3, 0.7, "diff_bias_dis", -0.5),  # bound 1 - |1.4 - 1|
        (0.0, 1.0, "diff_bias_amb", 0.0),  # zero bound: diff-bias is forced to 0
        (0.0, 0.0, "diff_bias_dis", 0.0),
        (None, 0.5, "diff_bias_amb", None),
        (0.1, None, "diff_bias_dis", None),
    ],
)
def test_normalised_diff_bias_divides_by_the_bound(diff_bias, accuracy, metric, expected):
    assert normalised(diff_bias, accuracy, metric) == (pytest.approx(expected) if expected is not None else None)


@functools.cache
def three_policies() -> tuple[KoBBQSummary, ...]:
    return tuple(kobbq_run(p, name=p).summary for p in ("biased", "unknown", "biased"))  # type: ignore[misc]


def test_table3_is_the_summaries_mean_and_std_over_prompts(costly):
    runs = three_policies()
    body, notes = compare_kobbq(["biased", "unknown", "biased again"], runs)
    assert body.table3["biased"].diff_bias_amb == runs[0].metrics.overall.diff_bias_amb
    assert body.table3["unknown"].acc_amb.mean == 1.0 and body.table3["biased"].acc_amb.mean == 0.0
    assert body.table3_by_label["ST"]["unknown"].acc_amb == runs[1].metrics.by_label["ST"].acc_amb
    assert set(body.table3_by_label) == set(runs[0].metrics.by_label)
    assert not any("label annotation" in note for note in notes)  # KoBBQ summaries carry each template's label


def test_wilcoxon_rows_cover_every_pair_and_metric():
    body, _ = compare_kobbq(["biased", "unknown", "biased again"], three_policies())
    labels = sorted({t.label for t in three_policies()[0].details.template_scores.values() if t.label})
    assert body.label_types == labels and labels
    assert len(body.wilcoxon) == 3 * len(TESTED_METRICS) * (1 + len(labels))  # all templates, then each label type
    same = [r for r in body.wilcoxon if {r.a, r.b} == {"biased", "biased again"}]
    assert all(r.p_value == pytest.approx(1.0) and r.mark == "" for r in same)
    differ = next(
        r for r in body.wilcoxon if (r.a, r.b, r.metric, r.label_type) == ("biased", "unknown", "diff_bias_amb", "all")
    )
    expected = stats.ranksums(template_sample(three_policies()[0], "diff_bias_amb"), template_sample(three_policies()[1], "diff_bias_amb"))
    assert differ.statistic == pytest.approx(expected.statistic) and differ.p_value == pytest.approx(expected.pvalue)
    assert differ.mark == "***" and differ.statistic > 0


def test_tukey_at_99_percent_across_models_on_normalised_diff_bias():
    body, _ = compare_kobbq(["biased", "unknown", "biased again"], three_policies())
    test = body.tukey_across_models["diff_bias_amb"]
    assert test is not None and test.confidence == 0.99
    assert test.means == {"biased": pytest.approx(1.0), "unknown": 0.0, "biased again": pytest.approx(1.0)}
    pairs = {(p.a, p.b): p for p in test.pairs}
    assert pairs[("biased", "unknown")].significant and pairs[("biased", "unknown")].mean_difference == pytest.approx(1.0)
    assert not pairs[("biased", "biased again")].significant


def labelled(run_id: str, values: list[float], labels: list[str]) -> KoBBQSummary:
    template = summary(run_id, values)
    template_scores = {
        t: TemplateScores(**{**s.model_dump(), "label": label})
        for (t, s), label in zip(template.details.template_scores.items(), labels)
    }
    return template.model_copy(update={"details": template.details.model_copy(update={"template_scores": template_scores})})


def test_label_types_get_their_own_rows_and_tukey_where_templates_carry_labels():
    labels = ["ST"] * 4 + ["TM"] * 4
    a = labelled("a", [0.1, 0.15, 0.2, 0.12, -0.2, -0.1, -0.15, -0.12], labels)
    b = labelled("b", [0.1, 0.15, 0.2, 0.12, 0.3, 0.25, 0.35, 0.32], labels)
    body, notes = compare_kobbq(["a", "b"], [a, b])
    assert body.label_types == ["ST", "TM"] and not any("label annotation" in n for n in notes)
    tm = next(r for r in body.wilcoxon if r.label_type == "TM" and r.metric == "diff_bias_amb")
    st = next(r for r in body.wilcoxon if r.label_type == "ST" and r.metric == "diff_bias_amb")
    assert (tm.n_a, tm.n_b) == (4, 4) and st.p_value == pytest.approx(1.0)
    assert tm.p_value == pytest.approx(stats.ranksums([-0.2, -0.1, -0.15, -0.12], [0.3, 0.25, 0.35, 0.32]).pvalue)
    across = body.tukey_across_labels["a"]["diff_bias_amb"]
    assert across is not None and [(p.a, p.b) for p in across.pairs] == [("ST", "TM")]
    # acc_amb 0.5 everywhere: normalised = diff-bias / 0.5
    assert across.means["ST"] == pytest.approx(2 * (0.1 + 0.15 + 0.2 + 0.12) / 4)


def test_a_summary_without_template_scores_cannot_be_tested():
    with pytest.raises(ConfigError, match="template_scores"):
        compare_kobbq(["a", "b"], [summary("a", []), summary("b", [0.1])])


# -- CBBQ -------------------------------------------------------------------------------
@functools.cache
def cbbq(letter: str, condition: str = "q") -> CBBQSummary:
    result = run_with_fakes(
        "cbbq",
        options={"mode": "generate", "condition": condition, "categories": "gender,region"},
        generator=ScriptedGenerator(lambda request, rendered: letter, name=f"always-{letter}"),
    )
    assert isinstance(result.summary, CBBQSummary)
    return result.summary


def test_cbbq_models_by_categories_are_the_summaries_cells():
    a, c = cbbq("A"), cbbq("C")
    body, notes = compare_cbbq(["A", "C"], [a, c])
    assert body.categories == ["gender", "region"] and notes == []
    assert body.by_category["A"]["gender"] == a.metrics.by_category["gender"]
    assert body.overall["C"].s_total == c.metrics.overall.s_total
    assert body.condition == {"A": a.metrics.condition_name, "C": c.metrics.condition_name}
    assert set(body.by_condition["A"]) == set(a.metrics.by_condition)


def test_cbbq_notes_different_headline_conditions():
    _, notes = compare_cbbq(["q", "q_if"], [cbbq("A"), cbbq("A", "q_if")])
    assert any("headline conditions differ" in note for note in notes)


def test_cbbq_notes_differently_aggregated_overall_scores():
    pooled = cbbq("A")
    pooled = pooled.model_copy(update={"metrics": pooled.metrics.model_copy(update={"overall_aggregate": "pooled"})})
    mean = cbbq("A")
    mean = mean.model_copy(update={"metrics": mean.metrics.model_copy(update={"overall_aggregate": "category_mean"})})
    _, notes = compare_cbbq(["p", "m"], [pooled, mean])
    assert any("aggregated differently" in note and "p: pooled" in note for note in notes)
    assert not any("aggregated differently" in note for note in compare_cbbq(["m", "n"], [mean, mean])[1])


def test_kobbq_notes_different_evaluators():
    five = summary("r1", [0.1, 0.2])
    root = five.model_copy(update={"run_id": "r2", "metrics": five.metrics.model_copy(update={"evaluator": "KoBBQ_evaluation"})})
    _, notes = compare_kobbq(["five", "root"], [five, root])
    assert any("different evaluators" in note and "root: KoBBQ_evaluation" in note for note in notes)


def test_cbbq_report_has_the_models_by_categories_tables_and_heat_map(tmp_path):
    from culturebias.testing.benchmarks import comparer, comparison_report
    from culturebias.application.compare import compare_summaries

    a, c = cbbq("A"), cbbq("C")
    compare_summaries([a, c], comparer("cbbq"), out_dir=tmp_path, report=comparison_report("cbbq"))
    report = (tmp_path / "comparison.md").read_text(encoding="utf-8")
    g, r, o = (a.metrics.by_category["gender"].s_amb, a.metrics.by_category["region"].s_amb, a.metrics.overall.s_amb)
    gi, ri = (a.metrics.by_category[c].intervals["s_amb"] for c in ("gender", "region"))
    cell = lambda v, i: f"{v:.3f} [{i.low:.3f}, {i.high:.3f}]"  # a category's value with its interval over templates
    assert f"| always-A | {cell(g, gi)} | {cell(r, ri)} | {o:.3f} |" in report
    gc, rc = (c.metrics.by_category[k].intervals["s_amb"] for k in ("gender", "region"))
    # every answer alike: Wilson intervals over each category's templates, not [0.000, 0.000] (issue 33.2)
    assert gc.method == rc.method == "Wilson" and gc.low == 0.0 < gc.high
    assert f"| always-C | {cell(0.0, gc)} | {cell(0.0, rc)} | 0.000 |" in report
    assert "its 95% CI over the category's templates" in report
    assert (tmp_path / "comparison_cbbq.png").is_file()


def test_tukey_across_label_types_tests_accuracy_as_it_does_diff_bias():
    """Paper §4.3, Fig. 4: label types are compared on accuracy too (raw, not normalised)."""
    labels = ["ST"] * 4 + ["TM"] * 4
    st_acc, tm_acc = [0.9, 0.85, 0.95, 0.88], [0.2, 0.25, 0.15, 0.22]
    template = labelled("a", [0.0] * 8, labels)
    template_scores = {
        t: TemplateScores(**{**s.model_dump(), "acc_amb": acc})
        for (t, s), acc in zip(template.details.template_scores.items(), st_acc + tm_acc)
    }
    a = template.model_copy(update={"details": template.details.model_copy(update={"template_scores": template_scores})})
    body, _ = compare_kobbq(["a", "b"], [a, labelled("b", [0.0] * 8, labels)])
    tests = body.tukey_across_labels["a"]
    assert list(tests) == ["acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis"]
    acc = tests["acc_amb"]
    assert acc is not None and acc.means == {"ST": pytest.approx(sum(st_acc) / 4), "TM": pytest.approx(sum(tm_acc) / 4)}
    pair = acc.pairs[0]
    assert pair.significant and pair.p_value == pytest.approx(stats.tukey_hsd(st_acc, tm_acc).pvalue[0, 1], rel=1e-6)
    assert tests["acc_dis"] is None  # no template has a disambiguated accuracy
    flat = body.tukey_across_labels["b"]["acc_amb"]
    assert flat is not None and not flat.pairs[0].significant


def test_one_runs_label_type_tests_cover_accuracy_unnormalised():
    from culturebias.domain.kobbq.run_tests import run_tests

    nan = float("nan")
    templates = {
        f"cat-{i:03d}": {"acc_amb": acc, "acc_dis": nan, "diff_bias_amb": 0.0, "diff_bias_dis": nan}
        for i, acc in enumerate([0.9, 0.85, 0.95, 0.88, 0.2, 0.25, 0.15, 0.22])
    }
    labels = {t: ("ST" if i < 4 else "TM") for i, t in enumerate(templates)}
    tests = run_tests(templates, labels)
    acc = tests.across_label_types["acc_amb"]
    assert acc is not None and acc.means["TM"] == pytest.approx(0.205) and acc.pairs[0].significant
    assert tests.across_label_types["acc_dis"] is None
    assert set(tests.across_categories) == {"diff_bias_amb", "diff_bias_dis"}
