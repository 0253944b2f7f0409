"""Edge rules: the score interval each kind of metric gets where every bootstrap resample gives the same value.

The benchmark modules (``domain/*/intervals.py``) know what a metric is and
build its rule here; ``unit_intervals`` calls it only for a zero-width
bootstrap. What n is: the answers behind a proportion are clustered in the
resampling units (a KoBBQ template holds 8 to 16 items, each asked under every
prompt), and answers of one unit are not independent. With no spread at all
the intra-cluster correlation cannot be estimated, so the rules take the
conservative design effect (every answer of a unit alike: the unit counts
once): n is the number of *units* behind the proportion, x is the observed
proportion times that n (fractional counts: the score formulas are continuous
in them). PROTOCOLS §5 "Intervals at the edges".
"""

from __future__ import annotations

from collections.abc import Sequence

from culturebias.domain.uncertainty.bootstrap import EdgeInterval, EdgeRule
from culturebias.domain.uncertainty.interval import plural_unit
from culturebias.domain.uncertainty.score import newcombe, newcombe_paired, wilson, wilson_mover

CONSERVATIVE = "the units, not the answers, as n: conservative for clustered answers"


def _units(n: float, unit: str) -> str:
    return f"{n:,.0f} {plural_unit(unit, int(n))}"


def proportion_edge(n: float, unit: str, *, scale: float = 1.0, what: str = "a proportion") -> EdgeRule | None:
    """Wilson on the reported value / ``scale`` (a proportion, or a mean of [0, scale] scores) over ``n`` units.

    A mean of scores bounded in [0, scale] is treated as a proportion: a Bernoulli variable has the largest
    variance of any [0, 1] variable with its mean, so the interval is conservative for it.
    """
    if n < 1:
        return None

    def rule(point: float, level: float) -> EdgeInterval | None:
        p = point / scale
        if not 0.0 <= p <= 1.0:
            return None
        low, high = wilson(p * n, n, level)
        return EdgeInterval(scale * low, scale * high, "Wilson",
                            f"Wilson score interval of {what}, n = {_units(n, unit)} ({CONSERVATIVE})")

    return rule


def paired_difference_edge(p1: float, p2: float, n: float, unit: str, *, what: str) -> EdgeRule | None:
    """Newcombe's paired hybrid score interval of p1 − p2, two shares of the same answers (none in both), over n units."""
    if n < 1 or not (0.0 <= p1 <= 1.0 and 0.0 <= p2 <= 1.0 and p1 + p2 <= 1.0 + 1e-12):
        return None

    def rule(point: float, level: float) -> EdgeInterval | None:
        f, g = p1 * n, p2 * n
        low, high = newcombe_paired(0.0, f, g, max(n - f - g, 0.0), level)
        return EdgeInterval(low, high, "Newcombe-paired",
                            f"Newcombe's hybrid score interval of {what} (two shares of the same answers, "
                            f"{p1:.3g} and {p2:.3g}), n = {_units(n, unit)} ({CONSERVATIVE})")

    return rule


def difference_edge(p1: float, n1: float, p2: float, n2: float, unit: str, *, what: str) -> EdgeRule | None:
    """Newcombe's hybrid score interval of p1 − p2, shares of different answers, over n1 and n2 units."""
    if n1 < 1 or n2 < 1 or not (0.0 <= p1 <= 1.0 and 0.0 <= p2 <= 1.0):
        return None

    def rule(point: float, level: float) -> EdgeInterval | None:
        low, high = newcombe(p1 * n1, n1, p2 * n2, n2, level)
        return EdgeInterval(low, high, "Newcombe",
                            f"Newcombe's hybrid score interval of {what} ({p1:.3g} of {_units(n1, unit)}, {p2:.3g} "
                            f"of {_units(n2, unit)}; {CONSERVATIVE})")

    return rule


def combination_edge(terms: Sequence[tuple[float, float, float]], unit: str, *, what: str) -> EdgeRule | None:
    """Σ w·p of independent proportions (w, p, n units): MOVER of their Wilson intervals (Zou & Donner 2008)."""
    kept = [(w, p, n) for w, p, n in terms if n >= 1 and 0.0 <= p <= 1.0 and w != 0]
    if not kept or len(kept) < len(terms):
        return None
    if len(kept) == 1 and kept[0][0] == 1.0:
        return proportion_edge(kept[0][2], unit, what=what)

    def rule(point: float, level: float) -> EdgeInterval | None:
        low, high = wilson_mover(kept, level)
        ns = ", ".join(sorted({_units(n, unit) for _, _, n in kept}))
        return EdgeInterval(low, high, "MOVER-Wilson",
                            f"MOVER of the Wilson intervals of {what} ({len(kept)} proportions over {ns}; "
                            f"{CONSERVATIVE})")

    return rule
