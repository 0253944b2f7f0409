"""The bootstrap interval of domain/uncertainty: coverage, determinism, degenerate inputs, fallbacks."""

from __future__ import annotations

import numpy as np
import pytest

from culturebias.domain.uncertainty import Interval, mean_interval, unit_interval


def test_the_interval_of_a_normal_mean_covers_the_true_mean_about_95_times_in_100():
    rng = np.random.default_rng(7)
    covered = 0
    for trial in range(100):
        sample = rng.normal(loc=3.0, scale=2.0, size=60)
        interval = mean_interval(sample, unit="draw", seed=trial, resamples=500)
        assert interval.method == "BCa" and interval.low < sample.mean() < interval.high
        covered += interval.low <= 3.0 <= interval.high
    assert 88 <= covered <= 99  # binomial(100, 0.95) lies here with probability > 0.99


def test_the_interval_of_a_normal_mean_has_about_the_t_interval_width():
    sample = np.random.default_rng(1).normal(size=400)
    interval = mean_interval(sample, unit="draw", seed=0)
    t_width = 2 * 1.966 * sample.std(ddof=1) / np.sqrt(sample.size)
    assert interval.high - interval.low == pytest.approx(t_width, rel=0.15)


def test_the_same_seed_gives_the_same_interval_and_another_seed_another():
    sample = np.random.default_rng(2).exponential(size=50)
    a, b = (mean_interval(sample, unit="draw", seed=11, resamples=300) for _ in range(2))
    c = mean_interval(sample, unit="draw", seed=12, resamples=300)
    assert a == b and (a.low, a.high) != (c.low, c.high)
    assert a.seed == 11 and a.resamples == 300 and a.n == 50 and a.unit == "draw"


def test_constant_data_give_a_zero_width_interval_at_the_point():
    interval = mean_interval([0.25] * 30, unit="pair", seed=0)
    assert (interval.low, interval.high) == (0.25, 0.25) and interval.method == "none"
    assert "zero width" in interval.note


@pytest.mark.parametrize("values", [[], [float("nan"), 1.0]])
def test_an_undefined_metric_has_no_bounds_and_says_why(values):
    interval = mean_interval(values, unit="item", seed=0)
    assert interval.low is None and interval.high is None and not interval.defined
    assert interval.note and interval.n == len(values)


def test_one_unit_gives_the_point_and_says_nothing_was_resampled():
    interval = mean_interval([0.7], unit="item", seed=0)
    assert (interval.low, interval.high, interval.n) == (0.7, 0.7, 1) and "fewer than two" in interval.note


def test_resamples_where_the_metric_is_undefined_are_left_out_and_counted():
    # the share of ones among units whose denominator is nonzero: a resample of only zero-denominator units is NaN
    num = np.array([1.0, 0.0, 0.0, 0.0])
    den = np.array([1.0, 1.0, 0.0, 0.0])

    def share(idx):
        with np.errstate(all="ignore"):
            return num[idx].sum(-1) / den[idx].sum(-1)

    interval = unit_interval(share, 4, unit="item", seed=3, resamples=400)
    assert interval.method == "percentile" and interval.defined
    assert "resamples leave the metric undefined" in interval.note and "BCa undefined" in interval.note
    assert 0.0 <= interval.low <= 0.5 <= interval.high <= 1.0


def test_above_the_bca_limit_the_percentile_interval_is_used_and_named():
    sample = np.random.default_rng(4).normal(size=300)
    interval = mean_interval(sample, unit="draw", seed=0, resamples=300, bca_max_n=100)
    assert interval.method == "percentile" and "jackknife" in interval.note and interval.contains(sample.mean())


def test_a_statistic_that_does_not_reproduce_the_reported_point_lends_it_no_interval():
    interval = mean_interval([1.0, 2.0, 3.0], unit="item", seed=0, point=5.0)
    assert not interval.defined and "not the reported 5.0" in interval.note


def test_an_interval_round_trips_through_json():
    interval = mean_interval([1.0, 2.0, 4.0, 8.0], unit="instance", seed=5, resamples=200)
    assert Interval.model_validate_json(interval.model_dump_json()) == interval


def test_libra_eicat_interval_holds_bbs_and_contains_the_point():
    from culturebias.domain.libra.metrics import TripletLikelihood, libra_scores
    from culturebias.domain.libra.intervals import libra_intervals

    rng = np.random.default_rng(5)
    triplets = [TripletLikelihood(*rng.normal(size=3)) for _ in range(60)]
    understood = [True, False, True, True]
    scores = libra_scores(triplets, understood)
    points = {"lms": scores.lms, "ss": scores.ss, "icat_local": scores.icat, "jsd": scores.jsd, "eicat": scores.eicat}
    intervals = libra_intervals(
        [t.stereotyped for t in triplets], [t.anti_stereotyped for t in triplets], [t.unrelated for t in triplets], points,
        bbs=scores.bbs, alpha=None, bins="auto", seed=0, resamples=300,
    )
    for name, point in points.items():
        assert intervals[name].contains(point) and intervals[name].n == 60 and intervals[name].unit == "triplet", name
    assert "bbs" in intervals["eicat"].note


def test_twbias_statistic_reproduces_the_evaluation_for_every_test_and_effect():
    from culturebias.domain.twbias.evaluation import AnalysisOptions, evaluate_specification
    from culturebias.domain.twbias.intervals import twbias_intervals

    rng = np.random.default_rng(3)
    types = ["0", "1", "2", "3", "4", "5"]
    origin = rng.lognormal(3, 0.4, size=(40, len(types)))
    replace = origin * rng.lognormal(0.05, 0.2, size=origin.shape)
    origin[0, 2] = np.nan  # an invalid score: left out of that prompt's test
    replace[1, 3] = origin[1, 3] * 50  # an outlier
    for test in ("paired", "welch", "student"):
        for effect in ("dz", "d"):
            options = AnalysisOptions(test=test, effect=effect)
            result = evaluate_specification(origin, replace, types, [0] * 40, [("x",)] * 40, options).overall.headline
            points = {"bias_ratio": result.bias_ratio, "effect_size": result.effect_size}
            intervals = twbias_intervals(origin, replace, types, options, points, seed=0, resamples=200)
            for name, point in points.items():
                assert intervals[name].contains(point) and "not the reported" not in (intervals[name].note or ""), (test, effect, name)


def test_benchmarks_without_any_scored_unit_get_undefined_intervals_not_errors():
    from culturebias.domain.bbq.intervals import cbbq_intervals, kobbq_intervals
    from culturebias.domain.mcbe.intervals import mcbe_intervals

    found = [
        *mcbe_intervals({"ba": {}}, {"gender:2": "gender"}, ["ba"], {"overall": None, "ba": None}, seed=0).values(),
        *kobbq_intervals([], ["1"], "pooled", {}, seed=0).values(),
        *cbbq_intervals([], 0.4, 0.6, "category_mean", {}, seed=0).values(),
    ]
    assert found and all(not i.defined and i.n == 0 and i.note for i in found)
