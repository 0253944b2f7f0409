"""The betting confidence sequence (Waudby-Smith & Ramdas 2024): anytime coverage, shrinking width, no collapse."""

from __future__ import annotations

import numpy as np
import pytest

from culturebias.domain.uncertainty.confidence_sequence import confidence_sequence


def test_it_covers_the_mean_at_every_time_at_once_in_at_least_1_minus_alpha_of_streams():
    # The CS after t observations is the running intersection, so missing the mean at *any* time up to 150 is
    # the last CS missing it. 500 seeded streams of a skewed [0, 1] variable with mean 0.3.
    rng = np.random.default_rng(20240501)
    misses = 0
    for _ in range(500):
        x = (rng.random(150) < 0.3).astype(float) * rng.choice([0.6, 1.0], 150) + 0.0
        mean = 0.3 * 0.8
        cs = confidence_sequence(x, None, 0.0, 1.0, alpha=0.1, grid=401)
        misses += _misses(cs, mean)
    assert misses / 500 <= 0.1 + 0.02


def test_a_fixed_sample_interval_looked_at_after_every_observation_misses_far_more_often():
    # what the confidence sequence is for: the same streams, a 90% normal interval after each observation from 10 on
    rng = np.random.default_rng(20240501)
    misses = 0
    for _ in range(500):
        x = (rng.random(150) < 0.3).astype(float) * rng.choice([0.6, 1.0], 150)
        t = np.arange(1, 151)
        mean = np.cumsum(x) / t
        sd = np.sqrt(np.maximum(np.cumsum(x**2) / t - mean**2, 0) * t / np.maximum(t - 1, 1))
        outside = np.abs(mean - 0.24) > 1.645 * sd / np.sqrt(t)
        misses += bool(outside[9:].any())
    assert misses / 500 > 0.3


def test_it_covers_a_pooled_ratio_with_weights():
    # units of 1 or 4 answers; a unit's own score is +1 or -1, more often +1 in large units.
    # The target is E[w x] / E[w] = (0.5 * 1 * -0.2 + 0.5 * 4 * 0.4) / 2.5 = 0.28 (the plain mean would be 0.1).
    rng = np.random.default_rng(7)
    misses = 0
    for _ in range(300):
        w = rng.choice([1.0, 4.0], 120)
        x = np.where(rng.random(120) < np.where(w == 4, 0.7, 0.4), 1.0, -1.0)
        misses += _misses(confidence_sequence(x, w, -1.0, 1.0, alpha=0.05, grid=801), 0.28)
    assert misses / 300 <= 0.05 + 0.03


def _misses(cs, value: float) -> bool:
    return not (cs.defined and cs.low <= value <= cs.high)


def test_it_shrinks_with_more_data_and_never_collapses_to_a_point():
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, 400)
    widths = [confidence_sequence(x[:n], None, -1, 1).high - confidence_sequence(x[:n], None, -1, 1).low for n in (25, 100, 400)]
    assert widths[0] > widths[1] > widths[2]
    same = confidence_sequence(np.zeros(43), None, -1.0, 1.0)
    assert same.estimate == 0 and same.low < -0.05 and same.high > 0.05  # equal values: still a sequence of width
    assert confidence_sequence(np.ones(21), None, -1.0, 1.0).low > 0.2  # all at the top: far from 0 already


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="must lie in"):
        confidence_sequence(np.array([2.0]), None, -1, 1)
    with pytest.raises(ValueError, match="low < high"):
        confidence_sequence(np.array([0.0]), None, 1, 1)
    with pytest.raises(ValueError, match="non-negative"):
        confidence_sequence(np.array([0.0]), np.array([-1.0]), -1, 1)
    empty = confidence_sequence(np.array([]), None, -1, 1)
    assert (empty.low, empty.high, empty.estimate) == (-1, 1, None)
