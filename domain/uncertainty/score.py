"""Score intervals of proportions and their differences: what an interval is where resampling says nothing.

A bootstrap whose every resample gives the same value (all answers alike, a
proportion at 0 or 1) has zero width: it is not evidence that the value is
known, only that the units do not vary. These intervals account for n instead:

- ``wilson``: the Wilson (1927) score interval of one proportion.
- ``clopper_pearson``: the exact (Clopper & Pearson 1934) interval of one proportion.
- ``newcombe``: Newcombe's hybrid score interval of a difference of two independent
  proportions (Newcombe 1998, Stat Med 17:873, method 10): the Wilson limits of
  each, combined by square-and-add.
- ``newcombe_paired``: Newcombe's hybrid score interval of a difference of two
  proportions of the *same* observations (Newcombe 1998, Stat Med 17:2635,
  method 10): the 2×2 table (e both, f first only, g second only, h neither),
  with the correlation φ of the two indicators (continuity-corrected when
  positive). KoBBQ's diff-bias, (biased − counter-biased) / n of one set of
  answers, is this table with e = 0.
- ``mover``: a linear combination Σ wᵢ θᵢ of independent estimates from each
  one's interval (the MOVER of Zou & Donner 2008; Newcombe's hybrid is its
  difference case), e.g. CBBQ's w1·S_amb + w2·S_dis or a mean over categories.

Counts may be fractional (an effective n, e.g. the template count, times the
observed proportion): the formulas are continuous in them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy import stats

Bounds = tuple[float, float]


def _z(level: float) -> float:
    return float(stats.norm.ppf(1 - (1 - level) / 2))


def wilson(x: float, n: float, level: float = 0.95) -> Bounds:
    """The Wilson score interval of x successes in n trials (n > 0)."""
    if n <= 0:
        raise ValueError(f"a proportion needs n > 0, got {n}")
    z = _z(level)
    p = min(max(x / n, 0.0), 1.0)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def clopper_pearson(x: float, n: float, level: float = 0.95) -> Bounds:
    """The Clopper–Pearson (exact, beta-quantile) interval of x successes in n trials (n > 0)."""
    if n <= 0:
        raise ValueError(f"a proportion needs n > 0, got {n}")
    alpha = 1 - level
    x = min(max(x, 0.0), n)
    low = 0.0 if x <= 0 else float(stats.beta.ppf(alpha / 2, x, n - x + 1))
    high = 1.0 if x >= n else float(stats.beta.ppf(1 - alpha / 2, x + 1, n - x))
    return low, high


def newcombe(x1: float, n1: float, x2: float, n2: float, level: float = 0.95) -> Bounds:
    """Newcombe's hybrid score interval of x1/n1 − x2/n2 (independent samples; method 10)."""
    p1, p2 = x1 / n1, x2 / n2
    l1, u1 = wilson(x1, n1, level)
    l2, u2 = wilson(x2, n2, level)
    d = p1 - p2
    return max(-1.0, d - math.hypot(p1 - l1, u2 - p2)), min(1.0, d + math.hypot(u1 - p1, p2 - l2))


def newcombe_paired(e: float, f: float, g: float, h: float, level: float = 0.95) -> Bounds:
    """Newcombe's hybrid score interval of p1 − p2 = (f − g) / n from one sample's 2×2 table (method 10).

    e: both indicators, f: the first only, g: the second only, h: neither; n = e + f + g + h.
    """
    n = e + f + g + h
    p1, p2 = (e + f) / n, (e + g) / n
    l1, u1 = wilson(e + f, n, level)
    l2, u2 = wilson(e + g, n, level)
    product = (e + f) * (g + h) * (e + g) * (f + h)
    b = e * h - f * g
    corrected = b - n / 2 if b > n / 2 else (b if b < 0 else 0.0)
    phi = corrected / math.sqrt(product) if product > 0 else 0.0
    d = p1 - p2
    below = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    above = (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2
    return max(-1.0, d - math.sqrt(max(below, 0.0))), min(1.0, d + math.sqrt(max(above, 0.0)))


def mover(terms: Sequence[tuple[float, float, float, float]]) -> Bounds:
    """The interval of Σ w·θ from independent terms (w, θ, low, high): MOVER (Zou & Donner 2008)."""
    point = sum(w * t for w, t, _, _ in terms)
    below = sum((w * (t - lo)) ** 2 if w >= 0 else (w * (hi - t)) ** 2 for w, t, lo, hi in terms)
    above = sum((w * (hi - t)) ** 2 if w >= 0 else (w * (t - lo)) ** 2 for w, t, lo, hi in terms)
    return point - math.sqrt(below), point + math.sqrt(above)


def wilson_mover(terms: Sequence[tuple[float, float, float]], level: float = 0.95) -> Bounds:
    """Σ w·p of independent proportions given as (w, p, n): each one's Wilson interval, combined by ``mover``."""
    return mover([(w, p, *wilson(p * n, n, level)) for w, p, n in terms])
