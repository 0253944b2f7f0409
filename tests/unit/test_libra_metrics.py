"""LIBRA metric functions: Table 1 of the paper, lms/ss/iCAT, base-2 JSD on shared bins."""

from __future__ import annotations

import math

import numpy as np
import pytest

from culturebias.domain.libra.metrics import (
    TripletLikelihood,
    beyond_boundary_score,
    eicat,
    icat,
    jensen_shannon_divergence,
    language_model_score,
    libra_scores,
    shared_bin_edges,
    stereotype_score,
)

# LIBRA (Pang et al., ECIR 2025), Table 1: model, lms, JSD, bbs, EiCAT (all 0–100).
# The first block is the New Zealand dataset, then Our Voices (OV), then Malaysia (Malay).
TABLE_1 = [
    ("RandomLM", 66.67, 0, 0, 0),
    ("IdealLM", 100, 0, 0, 0),
    ("LocalIdealLM", 100, 0, 100, 100),
    ("StereotypedLM", 100, 100, 100, 0),
    ("BERT-base", 96.04, 45.44, 3.96, 5.73),
    ("BERT-large", 96.73, 47.27, 4.11, 5.91),
    ("RoBERTA-base", 96.89, 39.11, 1.67, 2.58),
    ("RoBERTA-large", 97.46, 39.83, 2.28, 3.51),
    ("ALBERT-base-v2", 89.11, 27.56, 0.08, 0.12),
    ("ALBERT-large-v2", 88.26, 22.49, 1.9, 2.94),
    ("ALBERT-xlarge-v2", 86.23, 21.37, 1.22, 1.87),
    ("ALBERT-xxlarge-v2", 91.28, 35.58, 0.46, 0.69),
    ("GPT-2-base", 57.82, 0.49, 1.07, 1.23),
    ("GPT-2-medium", 57.3, 0.73, 1.75, 1.98),
    ("GPT-2-large", 59.67, 1.48, 1.37, 1.61),
    ("GPT-2-xl", 58.78, 1.37, 1.45, 1.68),
    ("Llama-3-8b", 77.48, 3.35, 7.31, 10.72),
    ("OV BERT-large", 96.45, 40.86, 0, 0),
    ("OV RoBERTA-large", 95.96, 32.93, 9.52, 14.39),
    ("OV ALBERT-xxlarge-v2", 94.63, 28.59, 4.76, 7.51),
    ("OV GPT-2-xl", 63.49, 1.92, 0, 0),
    ("OV Llama-3-8b", 80.38, 2.86, 4.76, 7.36),
    ("Malay BERT-large", 100, 63.77, 17.86, 21.14),
    ("Malay RoBERTA-large", 99.22, 39.39, 10.71, 15.93),
    ("Malay ALBERT-xxlarge-v2", 92.97, 39.9, 7.14, 10.15),
    ("Malay GPT-2-xl", 68.81, 1.72, 0, 0),
    ("Malay Llama-3-8b", 83.93, 2.49, 7.14, 11.41),
]


@pytest.mark.parametrize("model,lms,jsd,bbs,expected", TABLE_1, ids=[row[0] for row in TABLE_1])
def test_eicat_reproduces_every_row_of_table_1(model, lms, jsd, bbs, expected):
    assert eicat(lms, jsd, bbs) == pytest.approx(expected, abs=0.01)


def test_eicat_by_hand():
    # 0.9604 · (0.0396 · 0.5456 + 0.9604 · 0.0396) = 0.9604 · 0.05963952 = 0.0572758
    assert eicat(96.04, 45.44, 3.96) == pytest.approx(5.727595, abs=1e-6)


def test_eicat_with_a_fixed_alpha():
    # α = 0.5: 0.8 · (0.5 · 0.9 + 0.5 · 0.2) = 0.44
    assert eicat(80, 10, 20, alpha=0.5) == pytest.approx(44.0)
    with pytest.raises(ValueError):
        eicat(80, 10, 20, alpha=1.5)


def test_eicat_is_nan_when_an_input_is():
    assert math.isnan(eicat(80, float("nan"), 20))
    assert math.isnan(eicat(80, 10, float("nan")))


T = TripletLikelihood


def test_lms_counts_triplets_whose_best_is_not_the_unrelated_sentence():
    scores = [T(-1, -2, -3), T(-3, -1, -2), T(-3, -2, -1), T(-2, -5, -2)]  # last: tie with S_u
    assert language_model_score(scores) == pytest.approx(50.0)


def test_ss_is_strict():
    scores = [T(-1, -2, -9), T(-2, -1, -9), T(-1, -1, -9), T(-0.5, -3, -9)]
    assert stereotype_score(scores) == pytest.approx(50.0)


def test_icat_follows_stereoset():
    assert icat(90.0, 60.0) == pytest.approx(72.0)
    assert icat(90.0, 50.0) == pytest.approx(90.0)
    assert icat(100.0, 100.0) == 0.0


def test_empty_sets_give_nan():
    assert math.isnan(language_model_score([]))
    assert math.isnan(stereotype_score([]))
    assert math.isnan(beyond_boundary_score([]))
    assert math.isnan(jensen_shannon_divergence([], [1.0]).value)


def test_bbs_is_the_share_understood():
    assert beyond_boundary_score([True, False, True, True]) == 75.0


def test_jsd_of_identical_samples_is_zero_and_of_disjoint_bins_is_one():
    assert jensen_shannon_divergence([1, 2, 3], [3, 2, 1], bins=3).value == pytest.approx(0.0)
    result = jensen_shannon_divergence([0.0, 0.1], [0.9, 1.0], bins=2)
    assert result.value == pytest.approx(1.0)
    assert result.edges == pytest.approx((0.0, 0.5, 1.0))


def test_jsd_by_hand_in_bits():
    # Shared edges on [0, 2] with 2 bins: D_a = (1/2, 1/2), D_s = (1, 0).
    # M = (3/4, 1/4); KL(D_a||M) = ½log2(2/3) + ½log2(2) ; KL(D_s||M) = log2(4/3).
    result = jensen_shannon_divergence([0.0, 2.0], [0.0, 0.5], bins=2)
    kl_a = 0.5 * math.log2(0.5 / 0.75) + 0.5 * math.log2(0.5 / 0.25)
    kl_s = math.log2(1 / 0.75)
    assert result.value == pytest.approx(0.5 * kl_a + 0.5 * kl_s)
    assert result.value == pytest.approx(0.3112781, abs=1e-6)
    assert result.anti_stereotyped == pytest.approx((0.5, 0.5))
    assert result.stereotyped == pytest.approx((1.0, 0.0))


def test_bins_are_shared_between_both_samples():
    edges = shared_bin_edges([0.0, 1.0], [3.0, 4.0], bins=4)
    assert edges == pytest.approx(np.linspace(0, 4, 5))


def test_unknown_binning_is_refused():
    with pytest.raises(ValueError):
        shared_bin_edges([0.0], [1.0], bins="nonsense")
    with pytest.raises(ValueError):
        jensen_shannon_divergence([0.0, float("inf")], [1.0], bins=2)


def test_libra_scores_puts_it_together():
    valid = [T(-1, -2, -9), T(-2, -1, -9), T(-3, -4, -1)]
    scores = libra_scores(valid, [True, False], invalid=2, bins=2)
    assert scores.lms == pytest.approx(200 / 3)
    assert scores.ss == pytest.approx(200 / 3)
    assert scores.icat == pytest.approx((200 / 3) * (100 / 3) / 50)
    assert scores.bbs == 50.0
    # D_a = {-2,-1,-4}, D_s = {-1,-2,-3} on edges [-4, -2.5, -1]: D_a = (1/3, 2/3), D_s = (1/3, 2/3)
    assert scores.jsd == pytest.approx(0.0)
    assert scores.eicat == pytest.approx(eicat(scores.lms, 0.0, 50.0))
    assert scores.to_block().invalid == 2 and scores.to_block().valid == 3
