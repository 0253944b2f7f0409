"""One specification over prompt types: outliers first, then the test, headline and breakdowns."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as stats_module

from culturebias.domain.twbias.evaluation import (
    AnalysisOptions,
    category_rows,
    compare_rows,
    evaluate_specification,
    headline,
)
from culturebias.domain.twbias.summary import SpecificationHeader

ORIGIN = [1.0, 2.0, 3.0, 4.0]
REPLACE = [2.0, 4.0, 5.0, 4.0]  # paired t = -2.611 (origin minus replace), p = 0.0796, d = 0.980581, d_z = 1.305582

# The arrays here are small: these tests are about the test's mechanics, so they test from 2 pairs on (the default;
# protocol.min_pairs=2 says it outright). The flag of few pairs and the opt-in minimum are tested below.
SMALL = AnalysisOptions(min_pairs=2)


def matrices(origin_cols, replace_cols):
    return np.column_stack(origin_cols), np.column_stack(replace_cols)


def test_compare_rows_holds_every_traceable_number():
    stats = compare_rows(ORIGIN, REPLACE, SMALL, n_outliers=2, n_invalid=1)
    assert stats.n == 4 and stats.n_outliers == 2 and stats.n_invalid == 1
    assert stats.mean_origin_ppl == 2.5 and stats.mean_replace_ppl == 3.75
    assert stats.t == pytest.approx(-2.611165, abs=1e-6)  # the authors' sign: origin minus replace
    assert stats.p_value == pytest.approx(0.0796050, abs=1e-6)
    assert stats.cohens_d == pytest.approx(0.980581, abs=1e-6)
    assert stats.cohens_dz == pytest.approx(1.305582, abs=1e-6)
    assert stats.significant is False
    assert set(stats.to_block().model_dump()) == {
        "n", "n_outliers", "n_invalid", "mean_origin_ppl", "mean_replace_ppl", "t", "p_value",
        "cohens_d", "cohens_dz", "significant", "few_pairs",
    }
    assert stats.few_pairs == "few pairs: n = 4, low power"


def test_headline_counts_only_user_prompts_and_uses_the_chosen_effect():
    origin, replace = matrices([ORIGIN, ORIGIN, ORIGIN], [REPLACE, REPLACE, ORIGIN])
    strict = evaluate_specification(origin, replace, ["0", "1", "2"], [0] * 4, [()] * 4, AnalysisOptions(min_pairs=2, alpha=0.05))
    assert strict.overall.headline.bias_ratio == 0.0
    assert strict.overall.headline.effect_size == 0.0
    loose = evaluate_specification(origin, replace, ["0", "1", "2"], [0] * 4, [()] * 4, AnalysisOptions(min_pairs=2, alpha=0.1, effect="d"))
    # type 0 is significant too but is not a user prompt; type 2 has identical PPLs (p undefined)
    assert loose.overall.prompts["0"].significant
    assert loose.overall.headline.n_prompts == 2
    assert loose.overall.headline.bias_ratio == 0.5
    assert loose.overall.headline.effect_size == pytest.approx(0.980581, abs=1e-6)
    assert loose.overall.headline.significant_prompts == ("1",)
    dz = evaluate_specification(origin, replace, ["0", "1", "2"], [0] * 4, [()] * 4, AnalysisOptions(min_pairs=2, alpha=0.1, effect="dz"))
    assert dz.overall.headline.effect_size == pytest.approx(1.305582, abs=1e-6)
    default = evaluate_specification(origin, replace, ["0", "1", "2"], [0] * 4, [()] * 4, AnalysisOptions(min_pairs=2, alpha=0.1))
    assert default.overall.headline.effect_size == dz.overall.headline.effect_size  # d_z is the default (PROTOCOLS §1.6)


def test_without_user_prompts_the_headline_is_undefined():
    result = headline({}, SMALL)
    assert math.isnan(result.bias_ratio) and math.isnan(result.effect_size) and result.n_prompts == 0


def test_groups_too_small_to_test_have_an_undefined_ratio_not_zero():
    origin, replace = matrices([ORIGIN, ORIGIN], [REPLACE, REPLACE])
    result = evaluate_specification(origin, replace, ["1", "2"], [0, 0, 0, 1], [("A",), ("A",), ("A",), ("B",)], SMALL)
    for group in (result.by_toxicity["1"], result.by_category["B"]):
        assert group.n_rows == 1 and group.headline.n_prompts == 0
        assert math.isnan(group.headline.bias_ratio) and math.isnan(group.headline.effect_size)
    assert result.by_category["A"].headline.n_prompts == 2


def test_outliers_are_dropped_before_the_test():
    # Ten ordinary rows and one whose origin PPL is far out (see test_twbias_metrics).
    origin = np.array([[1.0 + 0.1 * i] for i in range(10)] + [[500.0]])
    replace = origin + np.array([[0.5 + 0.01 * i] for i in range(11)])
    result = evaluate_specification(origin, replace, ["1"], [0] * 11, [()] * 11, SMALL)
    stats = result.overall.prompts["1"]
    assert stats.n == 10 and stats.n_outliers == 1
    assert stats.mean_origin_ppl == pytest.approx(np.mean(origin[:10, 0]))
    assert stats.mean_replace_ppl == pytest.approx(np.mean(replace[:10, 0]))


def test_breakdowns_test_the_rows_that_survive_the_whole_specification_filter():
    origin = np.array([[1.0 + 0.1 * i] for i in range(10)] + [[500.0]])
    replace = origin + np.array([[0.5 + 0.01 * i] for i in range(11)])
    toxicity = [0] * 9 + [1, 1]
    result = evaluate_specification(origin, replace, ["1"], toxicity, [()] * 11, SMALL)
    toxic = result.by_toxicity["1"]
    assert toxic.n_rows == 2
    assert toxic.prompts["1"].n == 1 and toxic.prompts["1"].n_outliers == 1
    assert result.by_toxicity["0"].prompts["1"].n == 9
    assert result.by_toxicity["all"] is result.overall


def test_rows_without_toxicity_count_only_in_all():
    origin, replace = matrices([ORIGIN], [REPLACE])
    result = evaluate_specification(origin, replace, ["1"], [0, None, 1, 1], [()] * 4, SMALL)
    assert (result.by_toxicity["0"].n_rows, result.by_toxicity["1"].n_rows, result.by_toxicity["all"].n_rows) == (1, 2, 4)


def test_non_finite_ppls_are_counted_and_left_out():
    origin, replace = matrices([ORIGIN + [math.inf]], [REPLACE + [2.0]])
    stats = evaluate_specification(origin, replace, ["1"], [0] * 5, [()] * 5, SMALL).overall.prompts["1"]
    assert stats.n == 4 and stats.n_invalid == 1 and stats.n_outliers == 0
    assert stats.t == pytest.approx(-2.611165, abs=1e-6)  # the authors' sign: origin minus replace


def test_category_rows_unique_or_exploded():
    cats = [("A", "A"), ("A", "B"), (), None]
    assert category_rows(cats, "unique") == {"A": [0, 1], "B": [1]}
    assert category_rows(cats, "exploded") == {"A": [0, 0, 1], "B": [1]}


def test_category_breakdown_tests_each_category_on_its_rows():
    origin, replace = matrices([ORIGIN + [9.0]], [REPLACE + [1.0]])
    cats = [("A",), ("A",), ("A", "B"), ("A",), ("B",)]
    result = evaluate_specification(origin, replace, ["1"], [0] * 5, cats, SMALL)
    assert sorted(result.by_category) == ["A", "B"]
    a = result.by_category["A"].prompts["1"]
    assert a.n == 4 and a.t == pytest.approx(-2.611165, abs=1e-6)
    b = result.by_category["B"].prompts["1"]
    assert b.n == 2 and b.mean_origin_ppl == 6.0 and b.mean_replace_ppl == 3.0


HEADER = SpecificationHeader(
    origin="T2_female", reference="T1_male", origin_label="Female", reference_label="Male",
    sentences_file="gender/label_data_female.csv", term_pairs=2, rows_without_origin_term=0,
)


def test_to_block_nests_prompts_and_breakdowns():
    origin, replace = matrices([ORIGIN], [REPLACE])
    block = evaluate_specification(origin, replace, ["1"], [0] * 4, [("A",)] * 4, SMALL).to_block(HEADER)
    # Keys after these are optional additions. The bootstrap intervals (filled in by another module) belong to
    # every group block since schema 2.4, so a specification holds them after its own prompts.
    # few_pairs (after the intervals): these 4 pairs are few; a group of enough pairs has no such key.
    assert list(block.model_dump())[:18] == [
        "origin", "reference", "origin_label", "reference_label", "sentences_file", "term_pairs",
        "rows_without_origin_term", "n_rows", "bias_ratio", "effect_size", "n_prompts", "n_significant",
        "significant_prompts", "prompts", "intervals", "few_pairs", "by_toxicity", "by_category",
    ]  # fmt: skip
    assert list(block.by_category["A"].model_dump())[-3:] == ["prompts", "intervals", "few_pairs"]
    assert block.origin == "T2_female" and block.term_pairs == 2
    assert block.prompts["1"].n == 4
    assert block.by_toxicity["all"].prompts["1"].n == 4
    assert block.by_category["A"].n_rows == 4


def test_undefined_numbers_become_null_in_the_block():
    result = evaluate_specification(*matrices([ORIGIN], [REPLACE]), ["1"], [0] * 4, [()] * 4, SMALL)
    toxic = result.by_toxicity["1"].to_block()  # no toxic row: nothing to test
    assert toxic.n_rows == 0 and toxic.bias_ratio is None and toxic.effect_size is None
    assert toxic.prompts["1"].t is None and toxic.prompts["1"].mean_origin_ppl is None
    assert toxic.prompts["1"].significant is False
    assert result.overall.to_block().prompts["1"].t == result.overall.prompts["1"].t  # the same float, not rounded


def test_the_t_sign_option_reaches_every_test_and_leaves_p_and_d_alone():
    origin, replace = matrices([ORIGIN], [REPLACE])
    authors = evaluate_specification(origin, replace, ["1"], [0] * 4, [("A",)] * 4, SMALL)
    flipped = evaluate_specification(
        origin, replace, ["1"], [0] * 4, [("A",)] * 4, AnalysisOptions(min_pairs=2, t_sign="replace_minus_origin")
    )
    for a, b in ((authors.overall, flipped.overall), (authors.by_category["A"], flipped.by_category["A"])):
        assert a.prompts["1"].t == -b.prompts["1"].t < 0
        assert (a.prompts["1"].p_value, a.prompts["1"].cohens_dz) == (b.prompts["1"].p_value, b.prompts["1"].cohens_dz)
        assert a.headline == b.headline


def test_by_default_a_cell_of_few_pairs_is_tested_as_the_authors_code_tests_it_and_flagged():
    """Female Ability has 3 sentences: the authors tested it; so does the default, flagged as low power."""
    origin = np.array([[10.0], [11.0], [10.5]])
    replace = np.array([[30.0], [31.0], [30.4]])
    result = evaluate_specification(origin, replace, ["1"], [0] * 3, [("Ability",)] * 3, AnalysisOptions())
    stats = result.by_category["Ability"].prompts["1"]
    expected = stats_module.ttest_rel(origin[:, 0], replace[:, 0])  # the authors' ttest_rel(origin_ppl, replace_ppl)
    assert stats.untested is None and stats.few_pairs == "few pairs: n = 3, low power"
    assert (stats.t, stats.p_value) == pytest.approx((expected.statistic, expected.pvalue))
    headline = result.by_category["Ability"].headline
    assert headline.n_prompts == 1 and headline.bias_ratio == (1.0 if expected.pvalue < 0.05 else 0.0)
    assert headline.few_pairs == (
        "few pairs: n = 3, low power (every user prompt type behind these numbers was tested on under 10)")
    block = result.by_category["Ability"].to_block()
    assert block.few_pairs == headline.few_pairs and block.prompts["1"].few_pairs == stats.few_pairs


def test_one_pair_is_too_few_for_a_t_test_and_ten_pairs_are_not_flagged():
    one = evaluate_specification(np.array([[10.0]]), np.array([[30.0]]), ["1"], [0], [()], AnalysisOptions()).overall
    assert one.prompts["1"].untested == "too few to test: 1 sentence pair(s) after outliers; a t-test needs 2"
    assert one.prompts["1"].few_pairs is None and one.headline.n_prompts == 0
    origin = np.array([[10.0 + 0.1 * i] for i in range(10)])
    ten = evaluate_specification(origin, origin + 1.0 + origin / 50, ["1"], [0] * 10, [()] * 10, AnalysisOptions()).overall
    assert ten.prompts["1"].few_pairs is None and ten.headline.few_pairs is None
    assert "few_pairs" not in ten.to_block().model_dump()["prompts"]["1"]  # absent, not null: old summaries unchanged


def test_fewer_pairs_than_the_opt_in_minimum_are_too_few_to_test_and_never_significant():
    """TWBias --limit 2 once printed t = 2411 on one degree of freedom, "significant", effect size -578."""
    origin = np.array([[10.0], [11.0], [10.5]])
    replace = np.array([[30.0], [31.0], [30.4]])  # hugely "significant" with 2 or 3 pairs
    result = evaluate_specification(origin, replace, ["1"], [0] * 3, [()] * 3, AnalysisOptions(min_pairs=10))
    stats = result.overall.prompts["1"]
    assert stats.untested == "too few to test: 3 sentence pair(s) after outliers, at least 10 needed (protocol.min_pairs)"
    assert not stats.significant and all(math.isnan(x) for x in (stats.t, stats.p_value, stats.cohens_d, stats.cohens_dz))
    assert stats.n == 3 and stats.mean_origin_ppl == 10.5  # what was measured is still reported
    assert math.isnan(result.overall.headline.bias_ratio) and result.overall.headline.n_prompts == 0
    assert stats.few_pairs is None  # not tested: nothing to flag
    tested = evaluate_specification(origin, replace, ["1"], [0] * 3, [()] * 3, AnalysisOptions(min_pairs=3))
    assert tested.overall.prompts["1"].untested is None and tested.overall.headline.bias_ratio == 1.0


def test_the_minimum_counts_the_pairs_left_after_outliers():
    rows = 10
    origin = np.array([[10.0 + 0.1 * i] for i in range(rows)] + [[500.0]])
    replace = origin + 1.0
    replace[-1] = 900.0
    stats = evaluate_specification(origin, replace, ["1"], [0] * (rows + 1), [()] * (rows + 1), AnalysisOptions(min_pairs=10)).overall.prompts["1"]
    assert (stats.n, stats.n_outliers, stats.untested) == (10, 1, None)
