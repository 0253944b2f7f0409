"""Anytime-valid confidence sequences for a bounded mean or ratio of means, by betting.

A confidence sequence (CS) ``C_1, C_2, ...`` covers the true value at *every*
time at once with probability at least ``1 - alpha``: a check may look after
each round of data and stop as soon as it decides, and the repeated looks do
not inflate its error rate (a fixed-sample interval looked at after every round
would). The method is the hedged betting CS of Waudby-Smith & Ramdas,
"Estimating means of bounded random variables by betting", JRSS-B 86(1), 2024
(Section 4: the hedged capital process with predictable plug-in bets, their
eq. (26)-(27)); its validity is Ville's inequality for the nonnegative
martingale a fair bet's capital is.

Here it is stated for a ratio of means, ``R = E[w x] / E[w]``, which covers the
plain mean (every weight 1) and a pooled headline (a template's score weighted
by its answers, the pooled ratio of sums): ``x`` lies in ``[low, high]`` and
``w`` in ``[0, w_max]``. For a candidate value ``r`` the variable
``z = w (x - r) / w_max`` lies in ``[low - r, high - r]`` and has mean 0 exactly
when ``r = R``. Two gamblers bet on its sign, one on each side; their hedged
capital ``K_t(r) = (K+_t(r) + K-_t(r)) / 2`` is a nonnegative martingale when
``r = R`` (predictable bets, ``1 + bet * z > 0``), so by Ville's inequality
``P(exists t: K_t(R) >= 1/alpha) <= alpha``. The CS at time ``t`` is every ``r``
whose capital never reached ``1/alpha`` up to ``t`` (the running intersection);
it is computed on a grid of ``r`` over ``[low, high]`` and reported as the hull
of the grid points kept, widened by one grid step on each side (conservative).

The bets are WSR's predictable plug-in ``lambda_i = sqrt(2 log(2/alpha) /
(sigma_{i-1}^2 i log(1 + i)))`` with their regularised running variance, truncated
at ``c / distance to the bound`` (``c = 3/4``) so that the capital stays positive.
Even when every value is the same the CS keeps a width of about
``log(2/alpha) / t`` of the range: it never collapses to a point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

TRUNCATION = 0.75  # WSR's c: a bet risks at most this share of the capital
GRID = 2001


@dataclass(frozen=True)
class ConfidenceSequence:
    """The CS after the ``n`` observations seen so far; ``low``/``high`` None when every candidate was rejected."""

    low: float | None
    high: float | None
    estimate: float | None
    n: int
    alpha: float

    @property
    def defined(self) -> bool:
        return self.low is not None and self.high is not None


def _bets(z: np.ndarray, alpha: float, width: float) -> np.ndarray:
    """WSR's predictable plug-in bet sizes for each candidate row of ``z`` (shape ``(G, t)``), before truncation."""
    g, t = z.shape
    y = z / width  # range one
    i = np.arange(1, t + 1, dtype=float)
    # mu_hat_i, regularised with one prior observation at 0 (the null's mean; WSR use 1/2 on [0, 1])
    mean = np.cumsum(y, axis=1) / (i + 1)
    previous_mean = np.concatenate([np.zeros((g, 1)), mean[:, :-1]], axis=1)
    variance = (0.25 + np.cumsum((y - previous_mean) ** 2, axis=1)) / (i + 1)
    previous_variance = np.concatenate([np.full((g, 1), 0.25), variance[:, :-1]], axis=1)
    bet = np.sqrt(2 * math.log(2 / alpha) / (previous_variance * i * np.log1p(i)))
    return bet / width  # on z's scale


def _rejected(candidates: np.ndarray, values: np.ndarray, w: np.ndarray, low: float, high: float, alpha: float) -> np.ndarray:
    """For each candidate r: whether the hedged capital reached 1/alpha at some time up to now."""
    r = candidates[:, None]
    z = w[None, :] * (values[None, :] - r)  # (G, t), each in [low - r, high - r]
    bet = _bets(z, alpha, high - low)
    with np.errstate(divide="ignore"):
        cap_up = np.where(r > low, TRUNCATION / (r - low), np.inf)  # 1 + bet z > 0 for z >= low - r
        cap_down = np.where(r < high, TRUNCATION / (high - r), np.inf)  # 1 - bet z > 0 for z <= high - r
    log_up = np.cumsum(np.log1p(np.minimum(bet, cap_up) * z), axis=1)
    log_down = np.cumsum(np.log1p(-np.minimum(bet, cap_down) * z), axis=1)
    log_capital = np.logaddexp(log_up, log_down) + math.log(0.5)
    rejected: np.ndarray = np.any(log_capital >= math.log(1 / alpha), axis=1)
    return rejected


def confidence_sequence(
    x: np.ndarray,
    weights: np.ndarray | None,
    low: float,
    high: float,
    *,
    alpha: float = 0.05,
    grid: int = GRID,
) -> ConfidenceSequence:
    """The (1 - alpha) CS for ``E[w x] / E[w]`` after the observations ``x`` (in order), each in ``[low, high]``.

    ``weights`` None: every weight 1 (the plain mean). Observations are taken in the order given: the
    order must be fixed before the values are seen (a seeded draw), as the rounds of a sequential check fix it.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha is in (0, 1), got {alpha}")
    if not high > low:
        raise ValueError(f"a bounded mean needs low < high, got [{low}, {high}]")
    values = np.asarray(x, dtype=float)
    w = np.ones_like(values) if weights is None else np.asarray(weights, dtype=float)
    if values.shape != w.shape or values.ndim != 1:
        raise ValueError("x and weights are one value per observation")
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights are finite and non-negative")
    values = np.where(w > 0, values, 0.0)
    if np.any(values < low - 1e-12) or np.any(values > high + 1e-12) or not np.all(np.isfinite(values)):
        raise ValueError(f"every observation must lie in [{low}, {high}]")
    n = len(values)
    if n == 0 or not np.any(w > 0):
        return ConfidenceSequence(low, high, None, n, alpha)
    values = np.clip(values, low, high)
    w = w / w.max()
    estimate = float(np.sum(w * values) / np.sum(w))
    width = high - low
    candidates = np.linspace(low, high, grid)
    rows = max(1, 2_000_000 // n)  # candidates per block: memory stays small on long streams
    rejected = np.concatenate(
        [_rejected(candidates[k : k + rows], values, w, low, high, alpha) for k in range(0, grid, rows)]
    )
    kept = np.flatnonzero(~rejected)
    if len(kept) == 0:
        return ConfidenceSequence(None, None, estimate, n, alpha)
    step = width / (grid - 1)
    lo = max(low, float(candidates[kept[0]]) - step)
    hi = min(high, float(candidates[kept[-1]]) + step)
    return ConfidenceSequence(lo, hi, estimate, n, alpha)
