"""Tukey's HSD over the unordered pairs gives scipy.stats.tukey_hsd's numbers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from culturebias.domain.comparison.tukey import tukey_pairs


def test_pairs_match_scipy_with_unequal_sizes():
    rng = np.random.default_rng(3)
    groups = {name: list(rng.normal(shift, 1.0, size)) for name, shift, size in (("a", 0.0, 30), ("b", 0.4, 25), ("c", 1.5, 41))}
    expected = stats.tukey_hsd(*groups.values())
    interval = expected.confidence_interval(confidence_level=0.99)
    pairs = tukey_pairs(groups, confidence=0.99)
    assert pairs is not None and [(p.group_a, p.group_b) for p in pairs] == [("a", "b"), ("a", "c"), ("b", "c")]
    for pair, (i, j) in zip(pairs, [(0, 1), (0, 2), (1, 2)]):
        assert pair.mean_difference == pytest.approx(expected.statistic[i, j])
        assert pair.p_value == pytest.approx(expected.pvalue[i, j], rel=1e-9, abs=1e-12)
        assert (pair.ci_low, pair.ci_high) == (pytest.approx(interval.low[i, j]), pytest.approx(interval.high[i, j]))


def test_groups_with_fewer_than_two_values_are_left_out_and_constant_data_is_undefined():
    assert tukey_pairs({"a": [1.0, float("nan")], "b": [1.0, 2.0]}) is None
    pairs = tukey_pairs({"a": [0.0, 0.0], "b": [0.0, 0.0], "c": [None, 1.0]})  # type: ignore[list-item]
    assert pairs is not None and len(pairs) == 1
    assert pairs[0].mean_difference == 0.0 and np.isnan(pairs[0].p_value)
