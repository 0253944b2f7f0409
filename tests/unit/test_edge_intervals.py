"""Intervals that hold at the edges (issue 33, point 2): score intervals where every bootstrap resample agrees,
and no criterion decided on a zero-width resampling interval."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from culturebias.domain.bbq.answer_order import shown_order
from culturebias.domain.policy.decide import decide_threshold
from culturebias.domain.policy.model import Criterion
from culturebias.domain.uncertainty.bootstrap import unit_intervals
from culturebias.domain.uncertainty.edges import proportion_edge
from culturebias.domain.uncertainty.interval import Interval
from culturebias.domain.uncertainty.score import clopper_pearson, mover, newcombe, newcombe_paired, wilson, wilson_mover


@pytest.mark.parametrize("x, n", [(0, 10), (3, 20), (10, 10), (56, 70), (1, 269)])
def test_wilson_and_clopper_pearson_agree_with_scipy(x, n):
    test = binomtest(x, n)
    assert wilson(x, n) == pytest.approx(tuple(test.proportion_ci(method="wilson")), abs=1e-9)
    assert clopper_pearson(x, n) == pytest.approx(tuple(test.proportion_ci(method="exact")), abs=1e-9)
    assert wilson(x, n, 0.9)[1] < wilson(x, n, 0.99)[1] or x == n


# Newcombe (1998), Stat Med 17:873-890, Table II, method 10 (hybrid score), to the four decimals printed there.
@pytest.mark.parametrize("x1, n1, x2, n2, low, high", [
    (56, 70, 48, 80, 0.0524, 0.3339),
    (9, 10, 3, 10, 0.1705, 0.8090),
    (5, 56, 0, 29, -0.0381, 0.1926),
    (0, 10, 0, 20, -0.1611, 0.2775),
    (0, 10, 0, 10, -0.2775, 0.2775),
    (10, 10, 0, 20, 0.6791, 1.0000),
    (10, 10, 0, 10, 0.6075, 1.0000),
])
def test_newcombe_hybrid_score_interval_reproduces_newcombe_1998_table_ii(x1, n1, x2, n2, low, high):
    assert newcombe(x1, n1, x2, n2) == pytest.approx((low, high), abs=5e-5)


def test_newcombe_paired_reproduces_newcombe_1998b_and_widens_for_shares_of_the_same_answers():
    # Newcombe (1998), Stat Med 17:2635-2650, Table II example (a), method 10: e, f, g, h = 36, 12, 2, 0
    assert newcombe_paired(36, 12, 2, 0) == pytest.approx((0.0569, 0.3404), abs=5e-5)
    # KoBBQ's diff-bias: biased and counter-biased shares of one set of answers (none in both) are negatively
    # correlated, so the difference is wider than if they came from independent answers
    paired = newcombe_paired(0, 50, 50, 169)
    independent = newcombe(50, 269, 50, 269)
    assert paired[0] < independent[0] < 0 < independent[1] < paired[1]


def test_mover_of_one_term_is_its_interval_and_of_a_difference_is_newcombe():
    assert mover([(1.0, 0.3, 0.2, 0.45)]) == pytest.approx((0.2, 0.45))
    assert wilson_mover([(1.0, 0.8, 70), (-1.0, 0.6, 80)]) == pytest.approx(newcombe(56, 70, 48, 80))


def test_a_statistic_every_resample_agrees_on_gets_the_edge_rule_and_others_keep_the_bootstrap():
    values = np.zeros(40)
    rule = proportion_edge(40, "template", what="a share")
    assert rule is not None
    found = unit_intervals(lambda idx: np.stack([values[idx].mean(-1)]), 40, ("share",), unit="template", seed=0,
                           resamples=200, edges={"share": rule})["share"]
    assert found.method == "Wilson" and found.low == 0.0 and found.high == pytest.approx(wilson(0, 40)[1])
    assert "n = 40 templates" in found.note and not found.zero_width_resampling
    spread = np.random.default_rng(0).random(40)
    kept = unit_intervals(lambda idx: np.stack([spread[idx].mean(-1)]), 40, ("share",), unit="template", seed=0,
                          resamples=200, edges={"share": rule})["share"]
    assert kept.method == "BCa"  # an interval with width is the bootstrap's, unchanged


def _interval(low: float, high: float, method: str = "none") -> Interval:
    return Interval(low=low, high=high, n=269, unit="template", method=method, resamples=2000, seed=0,
                    note="every resample gives the same value: zero width")


@pytest.mark.parametrize("method", ["none", "BCa", "percentile"])
def test_a_criterion_never_passes_or_fails_on_a_zero_width_resampling_interval(method):
    c = Criterion(name="d", benchmark="kobbq", metric="diff_bias_amb", at_most=0.05)
    for value in (0.0, 1.0):
        decision = decide_threshold(c, "diff-bias", value, _interval(value, value, method))
        assert decision.outcome == "inconclusive" and "zero width" in decision.reason
    assert decide_threshold(c, "diff-bias", 0.0, _interval(0.0, 0.014, "Wilson")).outcome == "pass"


def test_an_all_a_kobbq_run_has_score_intervals_that_name_their_method_and_decide_nothing_too_early(tmp_path):
    import culturebias
    from culturebias.testing.kobbq_runs import kobbq_run

    assert list(shown_order(3, 0)) == [0, 1, 2]  # one option order, the identity: option 0 is shown as "A"
    # The validity rules would leave this run's diff-bias not measured (PROTOCOLS §6); off, its interval decides.
    result = kobbq_run(lambda item: 0, name="always-A", out_dir=tmp_path / "run", options={"validity": "off"})
    overall = result.summary.metrics.overall
    assert overall.diff_bias_amb.mean == 0.0
    diff = overall.intervals["diff_bias_amb"]
    assert diff.method == "Newcombe-paired" and diff.low < -0.05 and diff.high > 0.05
    assert f"n = {diff.n} templates" in diff.note and diff.n == 269
    assert {overall.intervals[m].method for m in ("acc_amb", "acc_dis")} == {"Wilson"}
    assert overall.intervals["diff_bias_dis"].method == "Newcombe"
    saved = culturebias.load_summary(tmp_path / "run").metrics.overall.intervals["diff_bias_amb"]
    assert saved.method == "Newcombe-paired"  # the summary's intervals block names it
    policy = tmp_path / "gate.toml"
    policy.write_text('[[criterion]]\nname = "d"\nbenchmark = "kobbq"\nmetric = "diff_bias_amb"\nat_most = 0.05\n')
    verdict = culturebias.check(policy, tmp_path / "run")
    assert verdict.criteria[0].outcome == "inconclusive" and "Newcombe-paired" in verdict.criteria[0].reason


def test_a_zero_width_paired_interval_gives_way_to_the_mover_of_the_runs_own_score_intervals(tmp_path_factory, tmp_path):
    import culturebias
    from culturebias.testing.policy_runs import replayed_runs

    runs = replayed_runs(tmp_path_factory.mktemp("policy-runs"))
    policy = tmp_path / "gate.toml"
    policy.write_text('[[criterion]]\nname = "b"\nbenchmark = "kobbq"\nmetric = "diff_bias_amb"\n'
                      "not_worse_than_baseline_by = 0.02\n", encoding="utf-8")
    # always biased against always "unknown": worse by 1 on every template, so every paired resample agrees
    verdict = culturebias.check(policy, runs["stereotyper"], baseline=runs["abstainer"])
    criterion = verdict.criteria[0]
    assert criterion.outcome == "fail" and criterion.interval.method == "MOVER-Wilson"
    assert 0.9 < criterion.interval.low < 1.0 <= criterion.interval.high and "ignores the pairing" in criterion.interval.note
