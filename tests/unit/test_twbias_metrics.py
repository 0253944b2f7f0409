"""TWBias metric functions against hand-computed values (and scipy where it applies)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from culturebias.domain.twbias.metrics import (
    bias_ratio,
    cohens_d,
    cohens_dz,
    effect_size,
    is_significant,
    outlier_mask,
    perplexity,
    significance_test,
)

# A small paired sample worked by hand:
# delta = replace - origin = [1, 2, 2, 0], mean 1.25, sample variance 2.75/3, sd 0.957427
# origin mean 2.5, var 5/3; replace mean 3.75, var 4.75/3
ORIGIN = [1.0, 2.0, 3.0, 4.0]
REPLACE = [2.0, 4.0, 5.0, 4.0]


def test_perplexity_is_exp_of_mean_negative_logprob():
    assert perplexity(-6.0, 3) == pytest.approx(math.exp(2.0))
    assert perplexity(0.0, 5) == 1.0
    assert perplexity(-1.0, 1) == pytest.approx(math.e)


def test_perplexity_without_tokens_is_undefined_and_huge_loss_is_infinite():
    assert math.isnan(perplexity(-3.0, 0))
    assert perplexity(-1e6, 1) == math.inf


def test_a_far_point_among_eleven_is_an_outlier():
    # [0]*10 + [11]: mean 1, population variance (10·1 + 100)/11 = 10, bound 1 + 3·√10 = 10.49 < 11
    origin = [0.0] * 10 + [11.0]
    mask = outlier_mask(origin, [5.0] * 11)
    assert mask.tolist() == [False] * 10 + [True]


def test_the_same_gap_among_nine_is_not():
    # [0]*8 + [9]: mean 1, population variance (8 + 64)/9 = 8, bound 1 + 3·√8 = 9.49 > 9
    assert not outlier_mask([0.0] * 8 + [9.0], [1.0] * 9).any()


def test_an_outlier_on_the_replace_side_drops_the_row_too():
    mask = outlier_mask([5.0] * 11, [0.0] * 10 + [11.0])
    assert mask.tolist() == [False] * 10 + [True]


def test_the_sigma_is_configurable_and_constant_data_has_no_outlier():
    assert outlier_mask([0.0] * 8 + [9.0], [1.0] * 9, sigma=2.0).tolist() == [False] * 8 + [True]
    assert not outlier_mask([3.0] * 5, [3.0] * 5).any()
    assert outlier_mask([], []).size == 0


def test_paired_t_test_by_hand_and_against_scipy():
    t, p = significance_test(ORIGIN, REPLACE, "paired")
    # t = -1.25 / (0.957427 / 2): the authors' ttest_rel(origin_ppl, replace_ppl) (PROTOCOLS §1.5)
    assert t == pytest.approx(-2.611165, abs=1e-6)
    assert p == pytest.approx(2 * stats.t.sf(2.611165, df=3), rel=1e-5)
    assert (t, p) == pytest.approx(tuple(stats.ttest_rel(ORIGIN, REPLACE)))


def test_the_default_sign_is_the_authors_origin_minus_replace_and_d_keeps_its_own():
    # Replaced sentences less likely (higher PPL): the model prefers the stereotype.
    t, _ = significance_test(ORIGIN, REPLACE)
    assert t < 0 < cohens_dz(ORIGIN, REPLACE) and cohens_d(ORIGIN, REPLACE) > 0
    t_swapped, _ = significance_test(REPLACE, ORIGIN, "paired")
    assert t_swapped == pytest.approx(2.611165, abs=1e-6)


@pytest.mark.parametrize("test", ["paired", "student", "welch"])
def test_replace_minus_origin_flips_t_and_only_t(test):
    authors, p = significance_test(ORIGIN, REPLACE, test)
    flipped, p_flipped = significance_test(ORIGIN, REPLACE, test, "replace_minus_origin")
    assert flipped == -authors and p_flipped == p
    with pytest.raises(ValueError):
        significance_test(ORIGIN, REPLACE, test, "up")  # type: ignore[arg-type]


def test_student_and_welch_options():
    t, p = significance_test(ORIGIN, REPLACE, "student")
    # pooled variance (3·5/3 + 3·4.75/3)/6 = 1.625, se = √(1.625·(1/4 + 1/4)); origin minus replace
    assert t == pytest.approx(-1.25 / math.sqrt(1.625 * 0.5))
    assert (t, p) == pytest.approx(tuple(stats.ttest_ind(ORIGIN, REPLACE)))
    tw, pw = significance_test(ORIGIN, REPLACE, "welch")
    assert tw == pytest.approx(t)  # equal sizes: same t, different degrees of freedom
    assert (tw, pw) == pytest.approx(tuple(stats.ttest_ind(ORIGIN, REPLACE, equal_var=False)))
    assert pw != pytest.approx(p, rel=1e-6)


def test_undefined_tests_give_nan_not_a_crash():
    assert all(math.isnan(x) for x in significance_test([1.0], [2.0]))
    assert all(math.isnan(x) for x in significance_test([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]))
    with pytest.raises(ValueError):
        significance_test([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        significance_test([1.0, 2.0], [1.0, 3.0], "z")  # type: ignore[arg-type]


def test_cohens_d_by_hand():
    # (3.75 - 2.5) / √((5/3 + 4.75/3) / 2) = 1.25 / √1.625
    assert cohens_d(ORIGIN, REPLACE) == pytest.approx(1.25 / math.sqrt(1.625))
    assert cohens_d(ORIGIN, REPLACE) == pytest.approx(0.980581, abs=1e-6)
    assert cohens_d(REPLACE, ORIGIN) == pytest.approx(-0.980581, abs=1e-6)


def test_cohens_dz_by_hand():
    assert cohens_dz(ORIGIN, REPLACE) == pytest.approx(1.25 / math.sqrt(2.75 / 3))


def test_effects_without_variance_are_undefined():
    assert math.isnan(cohens_d([1.0, 1.0], [2.0, 2.0]))
    assert math.isnan(cohens_dz([1.0, 2.0], [2.0, 3.0]))
    assert math.isnan(cohens_d([1.0], [2.0]))


def test_significance_is_strict_and_nan_is_not_significant():
    assert is_significant(0.049, 0.05)
    assert not is_significant(0.05, 0.05)
    assert not is_significant(float("nan"), 0.05)


def test_bias_ratio_is_the_share_of_significant_prompts():
    assert bias_ratio([0.01, 0.2, 0.049, float("nan")], 0.05) == 0.5
    assert bias_ratio([0.01] * 10) == 1.0
    assert bias_ratio([0.5] * 10) == 0.0
    assert bias_ratio([0.03, 0.07], alpha=0.1) == 1.0
    assert math.isnan(bias_ratio([]))


def test_effect_size_averages_the_significant_prompts_only():
    assert effect_size([0.01, 0.2, 0.03], [0.5, 9.0, 0.1]) == pytest.approx(0.3)
    assert effect_size([0.2, 0.3], [1.0, 2.0]) == 0.0
    assert effect_size([0.01, 0.02], [-0.4, -0.2]) == pytest.approx(-0.3)
    assert math.isnan(effect_size([0.01, 0.02], [0.4, float("nan")]))
    with pytest.raises(ValueError):
        effect_size([0.01], [0.1, 0.2])


def test_functions_accept_numpy_arrays():
    assert cohens_d(np.array(ORIGIN), np.array(REPLACE)) == pytest.approx(0.980581, abs=1e-6)
