"""KoBBQ accuracy/diff-bias, CBBQ bias scores, aggregation and statistics, on hand-counted answers."""

from __future__ import annotations

import math

import pytest

from culturebias.domain.bbq.aggregate import over_prompts, template_average
from culturebias.domain.cbbq.metrics import cbbq_scores
from culturebias.domain.cbbq.metrics import count_answers as count_cbbq
from culturebias.domain.kobbq.metrics import KOBBQ_METRICS, bounds, count_answers, kobbq_scores, score_answers
from culturebias.domain.bbq.model import Answer, AnswerClass, QAItem
from culturebias.domain.bbq.statistics import one_way_anova, rank_sum, tukey_hsd

BIASED, COUNTER, UNKNOWN = 0, 1, 2  # option indices of the items below


def item(sample_id: str, condition: str, polarity: str | None = None, template: str = "t-001", category: str = "age") -> QAItem:
    """Options (biased group, other group, unknown); the answer follows the context."""
    answer = UNKNOWN if condition == "ambiguous" else (BIASED if polarity == "biased" else COUNTER)
    return QAItem(
        sample_id=sample_id,
        category=category,
        template_id=template,
        context="c",
        question="q",
        options=("g1", "g2", "unknown"),
        answer_index=answer,
        biased_index=BIASED,
        unknown_index=UNKNOWN,
        context_condition=condition,  # type: ignore[arg-type]
        question_polarity="bsd",
        context_polarity=polarity,  # type: ignore[arg-type]
    )


AMB, DIS_B, DIS_C = item("a", "ambiguous"), item("b", "disambiguated", "biased"), item("c", "disambiguated", "counter_biased")


def answers(pairs, prompt="1"):
    return [Answer(it, prompt, 0, chosen) for it, chosen in pairs]


def test_kobbq_counts_and_scores_by_hand():
    # ambiguous: 3 biased, 1 counter, 2 unknown, 1 out-of-choice
    # biased-disambiguated: 4 biased (correct), 1 counter
    # counter-disambiguated: 1 biased, 2 counter (correct), 1 unknown, 1 out-of-choice
    pairs = [(AMB, BIASED)] * 3 + [(AMB, COUNTER), (AMB, UNKNOWN), (AMB, UNKNOWN), (AMB, None)]
    pairs += [(DIS_B, BIASED)] * 4 + [(DIS_B, COUNTER)]
    pairs += [(DIS_C, BIASED), (DIS_C, COUNTER), (DIS_C, COUNTER), (DIS_C, UNKNOWN), (DIS_C, None)]
    counts = count_answers(answers(pairs))
    assert (counts.n_total, counts.n_ooc) == (17, 2)
    assert (counts.n_a, counts.n_ab, counts.n_ac, counts.n_au) == (6, 3, 1, 2)
    assert (counts.n_b, counts.n_bb, counts.n_bc, counts.n_bu) == (5, 4, 1, 0)
    assert (counts.n_c, counts.n_cb, counts.n_cc, counts.n_cu) == (4, 1, 2, 1)
    scores = kobbq_scores(counts)
    assert scores["acc_amb"] == pytest.approx(2 / 6)
    assert scores["diff_bias_amb"] == pytest.approx((3 - 1) / 6)
    assert scores["acc_dis"] == pytest.approx((4 + 2) / (5 + 4))
    assert scores["diff_bias_dis"] == pytest.approx(4 / 5 - 2 / 4)
    assert scores["ooc_ratio"] == pytest.approx(2 / 17)


def test_undefined_ratios_are_nan_not_zero():
    scores = score_answers(answers([(AMB, None), (DIS_B, BIASED)]))
    assert math.isnan(scores["acc_amb"]) and math.isnan(scores["diff_bias_amb"])
    assert math.isnan(scores["diff_bias_dis"])  # no counter-biased context answered
    assert scores["acc_dis"] == 1.0


def test_bounds_hold_for_balanced_contexts_and_can_break_with_unequal_losses():
    balanced = score_answers(answers([(AMB, BIASED), (AMB, UNKNOWN), (DIS_B, BIASED), (DIS_C, BIASED)]))
    b = bounds(balanced)
    assert b.diff_bias_amb_bound == pytest.approx(0.5) and b.diff_bias_amb_within_bound is True
    assert b.diff_bias_dis_bound == pytest.approx(1.0) and b.diff_bias_dis_within_bound is True
    # 1 biased-context answer survives, 3 counter-context ones: DiffBias_d = 1 - 0 = 1, Acc_d = 1/4
    unequal = score_answers(answers([(DIS_B, BIASED), (DIS_C, BIASED), (DIS_C, BIASED), (DIS_C, BIASED)]))
    assert unequal["diff_bias_dis"] == 1.0
    assert bounds(unequal).diff_bias_dis_bound == pytest.approx(0.5)
    assert bounds(unequal).diff_bias_dis_within_bound is False


def test_template_average_is_the_mean_of_per_template_scores():
    t1 = item("x1", "ambiguous", template="age-001")
    t2 = item("x2", "ambiguous", template="age-002")
    pairs = [(t1, BIASED), (t1, UNKNOWN), (t2, UNKNOWN), (t2, UNKNOWN), (t2, UNKNOWN), (t2, COUNTER)]
    averaged = template_average(answers(pairs), score_answers, KOBBQ_METRICS)
    assert averaged["acc_amb"] == pytest.approx((1 / 2 + 3 / 4) / 2)
    assert averaged["diff_bias_amb"] == pytest.approx((1 / 2 + -1 / 4) / 2)
    pooled = score_answers(answers(pairs))
    assert pooled["acc_amb"] == pytest.approx(4 / 6)


def test_over_prompts_mean_and_sample_std_skip_undefined_prompts():
    per_prompt = {"1": {"m": 0.2}, "2": {"m": 0.4}, "3": {"m": 0.9}, "4": {"m": float("nan")}}
    out = over_prompts(per_prompt, ["m"], ddof=1)["m"]
    assert out.mean == pytest.approx(0.5)
    assert out.std == pytest.approx(math.sqrt(((0.3**2) + (0.1**2) + (0.4**2)) / 2))
    assert out.n_prompts == 3
    assert out.per_prompt == {"1": 0.2, "2": 0.4, "3": 0.9, "4": None}  # undefined (NaN) is null
    assert over_prompts(per_prompt, ["m"], ddof=0)["m"].std == pytest.approx(math.sqrt(0.26 / 3))


def cbbq_item(sample_id: str, condition: str, answer: int) -> QAItem:
    return QAItem(sample_id, "gender", "t", "c", "q", ("男生", "女生", "不知道"), answer, BIASED, UNKNOWN, condition, "neg")  # type: ignore[arg-type]


def test_cbbq_scores_use_non_unknown_answers_as_the_disambiguated_denominator():
    amb = cbbq_item("amb", "ambiguous", UNKNOWN)
    dis = cbbq_item("dis", "disambiguated", COUNTER)  # the correct answer contradicts the bias
    pairs = [(amb, BIASED)] * 2 + [(amb, COUNTER)] + [(amb, UNKNOWN)] * 5 + [(amb, None)]
    pairs += [(dis, BIASED)] * 3 + [(dis, COUNTER)] * 1 + [(dis, UNKNOWN)] * 4
    counts = count_cbbq(answers(pairs))
    assert (counts.n_amb, counts.n_amb_biased, counts.n_ooc) == (8, 2, 1)
    assert (counts.n_dis, counts.n_dis_non_unknown, counts.n_dis_biased) == (8, 4, 3)
    scores = cbbq_scores(counts)
    assert scores["s_amb"] == pytest.approx(2 / 8)
    assert scores["s_dis"] == pytest.approx(3 / 4)  # not 3/8
    assert scores["s_total"] == pytest.approx(0.4 * 2 / 8 + 0.6 * 3 / 4)
    assert scores["acc_amb"] == pytest.approx(5 / 8)
    assert scores["acc_dis"] == pytest.approx(1 / 8)
    assert scores["ooc_ratio"] == pytest.approx(1 / 17)
    assert cbbq_scores(counts, 0.5, 0.5)["s_total"] == pytest.approx(0.5 * 2 / 8 + 0.5 * 3 / 4)


def test_cbbq_accuracy_counts_items_without_a_biased_answer_and_s_amb_does_not():
    unresolved = QAItem("u", "gender", "t", "c", "q", ("a", "b", "c"), 2, None, 2, "ambiguous", "neg")
    assert unresolved.classify(2) is AnswerClass.UNKNOWN
    assert unresolved.classify(0) is AnswerClass.GROUP
    assert unresolved.classify(None) is AnswerClass.OUT_OF_CHOICE
    amb = cbbq_item("amb", "ambiguous", UNKNOWN)
    # resolved: 1 biased, 1 unknown; unresolved: 2 unknown (correct), 1 group (wrong), 1 out-of-choice
    pairs = [(amb, BIASED), (amb, UNKNOWN), (unresolved, 2), (unresolved, 2), (unresolved, 0), (unresolved, None)]
    counts = count_cbbq(answers(pairs))
    assert (counts.n_amb, counts.n_amb_unresolved, counts.n_amb_unresolved_unknown, counts.n_ooc) == (2, 3, 2, 1)
    scores = cbbq_scores(counts)
    assert scores["s_amb"] == pytest.approx(1 / 2)  # the unresolved answers are not in S_amb
    assert scores["acc_amb"] == pytest.approx(3 / 5)  # but they are in acc_amb
    assert scores["ooc_ratio"] == pytest.approx(1 / 6)
    dis_unresolved = QAItem("d", "gender", "t", "c", "q", ("a", "b", "c"), 0, None, 2, "disambiguated", "neg")
    with pytest.raises(ValueError):
        count_cbbq(answers([(dis_unresolved, 0)]))


def test_statistics_against_hand_values():
    # rank-sum of [1,2,3] vs [4,5,6]: rank sum 6, expected 10.5, sd sqrt(3*3*7/12) → z = -1.9640
    result = rank_sum([1, 2, 3], [4, 5, 6, float("nan")])
    assert result.statistic == pytest.approx(-4.5 / math.sqrt(63 / 12))
    assert (result.n_a, result.n_b) == (3, 3)
    # ANOVA: group means 2 and 5, SSB = 13.5 (df 1), SSW = 4 (df 4) → F = 13.5
    anova = one_way_anova({"a": [1, 2, 3], "b": [4, 5, 6], "c": [7]})
    assert anova.f_statistic == pytest.approx(13.5)
    assert anova.left_out == ("c",)
    pairs = tukey_hsd({"a": [1, 2, 3], "b": [4, 5, 6]})
    assert len(pairs) == 1 and pairs[0].mean_difference == pytest.approx(-3.0)
    assert pairs[0].p_value == pytest.approx(anova.p_value)  # two groups: Tukey's p equals the ANOVA p
    assert one_way_anova({"a": [1, 2]}) is None
