"""The pure part of acceptance policies: criteria, the decision rule, breakdowns, the paired bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.policy.breakdown import available_breakdowns, breakdown_metric
from culturebias.domain.policy.decide import decide_baseline, decide_baseline_point, decide_threshold, limitation
from culturebias.domain.policy.model import Criterion, Policy
from culturebias.domain.policy.paired import UnitValues, paired_difference, reproduces
from culturebias.domain.policy.verdict import PolicyVerdict, overall, verdict_schema
from culturebias.domain.uncertainty.interval import Interval

DIFF = HeadlineMetric(name="d", label="diff", value="metrics.overall.d", interval="metrics.overall.intervals.d",
                      direction="closer", target=0.0)
ACC = HeadlineMetric(name="acc", label="accuracy", value="metrics.overall.acc", direction="higher")


def criterion(**given) -> Criterion:
    return Criterion(**{"name": "c", "benchmark": "kobbq", "metric": "d", **given})


def interval(low, high, n=100, level=0.95, note=None) -> Interval:
    return Interval(low=low, high=high, level=level, n=n, unit="template", method="BCa", resamples=2000, seed=0, note=note)


# -- criteria ------------------------------------------------------------------------------------
def test_a_criterion_has_exactly_one_decision():
    with pytest.raises(ValidationError, match="exactly one of at_most, at_least, between, not_worse_than_baseline_by; got none"):
        criterion()
    with pytest.raises(ValidationError, match="got at_most, at_least"):
        criterion(at_most=1, at_least=0)
    with pytest.raises(ValidationError, match="low <= high"):
        criterion(between=(1, 0))
    with pytest.raises(ValidationError, match="between 0 and 1"):
        criterion(at_most=1, confidence=95)
    with pytest.raises(ValidationError, match="'KIND:VALUE'"):
        criterion(at_most=1, breakdown="age")
    assert criterion(not_worse_than_baseline_by=0.02).needs_baseline
    assert criterion(at_most=1, confidence="point").level_words() == "the point estimate"


def test_criterion_names_are_unique_within_a_policy():
    with pytest.raises(ValidationError, match="given twice: c"):
        Policy(name="p", criteria=[criterion(at_most=1), criterion(at_least=0)])


# -- the decision rule ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("decision", "low", "high", "outcome", "words"),
    [
        ({"at_most": 0.05}, 0.01, 0.04, "pass", "the whole interval is at most 0.05"),
        ({"at_most": 0.05}, 0.06, 0.09, "fail", "the whole interval is above 0.05"),
        ({"at_most": 0.05}, 0.04, 0.06, "inconclusive", "the interval straddles 0.05"),
        ({"at_most": 0.05}, 0.01, 0.05, "pass", "at most 0.05"),  # a bound on the threshold satisfies it
        ({"at_least": 0.9}, 0.91, 0.95, "pass", "the whole interval is at least 0.9"),
        ({"at_least": 0.9}, 0.8, 0.85, "fail", "the whole interval is below 0.9"),
        ({"between": (-0.1, 0.1)}, -0.05, 0.05, "pass", "within [-0.1, 0.1]"),
        ({"between": (-0.1, 0.1)}, 0.2, 0.3, "fail", "outside [-0.1, 0.1]"),
        ({"between": (-0.1, 0.1)}, 0.05, 0.2, "inconclusive", "straddles a bound of [-0.1, 0.1]"),
    ],
)
def test_the_interval_decides(decision, low, high, outcome, words):
    decided = decide_threshold(criterion(**decision), "diff", (low + high) / 2, interval(low, high))
    assert decided.outcome == outcome and decided.decided_on == "interval"
    assert words in decided.reason and "95% interval" in decided.reason and "n = 100 templates" in decided.reason


def test_the_point_decides_when_asked():
    decided = decide_threshold(criterion(at_most=0.05, confidence="point"), "diff", 0.04, interval(0.0, 0.09))
    assert (decided.outcome, decided.decided_on) == ("pass", "point")
    assert "decided on the point estimate" in decided.reason


@pytest.mark.parametrize(
    ("value", "stored", "confidence", "words"),
    [
        (None, interval(0, 1), 0.95, "undefined for this run"),
        (0.01, None, 0.95, 'no interval is stored for diff; decide on the estimate with confidence = "point"'),
        (0.01, interval(None, None, note="the metric is undefined on these units"), 0.95, "the metric is undefined"),
        (0.01, interval(0.01, 0.01, n=1, note="fewer than two units: nothing to resample"), 0.95, "rests on 1 template"),
        (0.01, interval(0.0, 0.02), 0.99, "stored a 95% interval of diff; the criterion asks for 99%"),
    ],
)
def test_what_cannot_decide_is_inconclusive_with_the_reason(value, stored, confidence, words):
    decided = decide_threshold(criterion(at_most=0.05, confidence=confidence), "diff", value, stored)
    assert decided.outcome == "inconclusive" and words in decided.reason


def test_the_overall_outcome_and_the_exit_codes():
    assert overall(["pass", "pass"]) == "pass"
    assert overall(["pass", "inconclusive"]) == "inconclusive"
    assert overall(["inconclusive", "fail"]) == "fail"
    assert overall(["pass", "inconclusive"], "fail") == "fail"
    assert overall(["pass", "inconclusive"], "pass") == "pass"


def test_limited_and_category_sampled_runs_are_named():
    class Summary:
        limit = None
        config = {"protocol": {"categories": "age,gender"}}

    assert limitation(Summary()) == "a run on a sample of the categories (protocol.categories=age,gender)"
    Summary.config = {"protocol": {"categories": None}}
    assert limitation(Summary()) is None


# -- breakdowns ----------------------------------------------------------------------------------
def test_a_breakdown_moves_the_paths_into_the_per_kind_block():
    moved = breakdown_metric(DIFF, "category:age")
    assert moved is not None
    assert (moved.value, moved.interval) == ("metrics.by_category.age.d", "metrics.by_category.age.intervals.d")
    assert moved.label == "diff (category:age)"
    assert breakdown_metric(HeadlineMetric(name="x", label="x", value="metrics.gender.x", direction="lower"), "a:b") is None


def test_the_available_breakdowns_are_those_whose_block_holds_the_metric():
    summary = {"metrics": {"overall": {"d": 0.1}, "by_category": {"age": {"d": 0.2}, "sex": {"d": 0.3}},
                           "by_label": {"ST": {"d": 0.0}}, "by_nothing": 3}}
    assert available_breakdowns(summary, DIFF) == ["category:age", "category:sex", "label:ST"]


# -- the paired bootstrap ------------------------------------------------------------------------
def mean_units(ids, values) -> UnitValues:
    return UnitValues("template", tuple(ids), np.asarray(values, dtype=float), lambda chosen: chosen.mean(axis=-1))


def test_the_paired_difference_is_over_shared_units_and_follows_the_direction():
    rng = np.random.default_rng(1)
    base = rng.normal(0.0, 0.3, 200)
    run = mean_units([f"t{i}" for i in range(200)], base + 0.1)  # every unit 0.1 higher
    baseline = mean_units([f"t{i}" for i in range(200)], base)
    higher = paired_difference(ACC, run, baseline, level=0.95)
    # higher is better: the run is better, by exactly 0.1 on every resample (paired: the noise cancels)
    assert higher.point == pytest.approx(-0.1)
    assert higher.interval.low == pytest.approx(-0.1) and higher.interval.high == pytest.approx(-0.1)
    assert higher.shared == 200 and higher.only_in_run == 0
    unpaired_spread = 2 * 1.96 * base.std() / np.sqrt(200)
    assert unpaired_spread > 0.05  # an unpaired test would straddle a margin the paired one decides
    extra = mean_units([*(f"t{i}" for i in range(200)), "new"], [*(base + 0.1), 9.0])
    assert paired_difference(ACC, extra, baseline, level=0.95).only_in_run == 1


def test_a_closer_metric_compares_distances_from_its_target():
    run = mean_units(["a", "b", "c"], [-0.2, -0.2, -0.2])
    baseline = mean_units(["a", "b", "c"], [0.1, 0.1, 0.1])
    difference = paired_difference(DIFF, run, baseline, level=0.95)
    assert difference.point == pytest.approx(0.1)  # |-0.2| - |0.1|: worse by 0.1


def test_non_inferiority_on_the_paired_interval():
    c = criterion(not_worse_than_baseline_by=0.02)
    rng = np.random.default_rng(2)
    noise = rng.normal(0, 0.01, 300)
    ids = [str(i) for i in range(300)]
    same = paired_difference(ACC, mean_units(ids, 0.5 + noise), mean_units(ids, 0.5 + noise * 0.9), level=0.95)
    assert decide_baseline(c, "acc", "higher is better", same).outcome == "pass"
    worse = paired_difference(ACC, mean_units(ids, 0.4 + noise), mean_units(ids, 0.5 + noise), level=0.95)
    decided = decide_baseline(c, "acc", "higher is better", worse)
    assert decided.outcome == "fail" and "worse than the margin 0.02" in decided.reason
    edge = paired_difference(ACC, mean_units(ids, 0.48 + rng.normal(0, 0.05, 300)), mean_units(ids, 0.5 + noise), level=0.95)
    assert decide_baseline(c, "acc", "higher is better", edge).outcome == "inconclusive"


def test_non_inferiority_on_the_point_estimates():
    c = criterion(not_worse_than_baseline_by=0.02, confidence="point")
    assert decide_baseline_point(c, "acc", "higher", 0.49, 0.5, ACC.badness).outcome == "pass"
    assert decide_baseline_point(c, "acc", "higher", 0.47, 0.5, ACC.badness).outcome == "fail"
    assert decide_baseline_point(c, "acc", "higher", None, 0.5, ACC.badness).outcome == "inconclusive"


def test_per_unit_values_must_reproduce_the_reported_value():
    units = mean_units(["a", "b"], [0.2, 0.4])
    assert reproduces(units, 0.3) is None
    assert reproduces(units, 0.31) == "its per-template values give 0.3, not the reported 0.31"
    with pytest.raises(ValueError, match="unique"):
        mean_units(["a", "a"], [0.1, 0.2])


def test_the_verdict_schema_describes_every_field():
    schema = verdict_schema()
    assert schema["title"] == "PolicyVerdict"
    ours = ("CheckedRun", "CriterionVerdict", "OutcomeCounts", "Criterion")  # Interval is summary.json's own
    assert set(ours) <= set(schema["$defs"])
    for name, definition in [("PolicyVerdict", schema), *((n, schema["$defs"][n]) for n in ours)]:
        for field, spec in definition.get("properties", {}).items():
            assert spec.get("description"), f"{name}.{field} has no description"
    assert set(PolicyVerdict.model_fields) <= set(schema["properties"])
