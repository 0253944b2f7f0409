"""A policy decided in rounds (``check --sequential``): each criterion on an anytime-valid confidence sequence.

The units a round adds (KoBBQ templates) join the stream in an order fixed before
their values are seen: by the round that drew them, then a seeded shuffle of their
ids. A criterion's per-unit values are the headline of each unit alone and the
unit's weight in a pooled headline (``UnitValues.weights``); their weighted mean
must reproduce the round's reported headline, else the criterion is not decided
on them (inconclusive, with the reason). After each round the confidence sequence
(``domain/uncertainty/confidence_sequence.py``) over the stream is judged by the
rule ``check`` uses: pass when all of it satisfies the criterion, fail when all of
it violates it. No decision is made before ``min_units`` units are in the stream.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import numpy as np
from culturebias.domain.policy.decide import Decision, criterion_words, judge, number
from culturebias.domain.policy.model import Criterion
from culturebias.domain.policy.paired import UnitValues
from culturebias.domain.sequential_block import MIN_UNITS  # noqa: F401  (re-exported)
from culturebias.domain.uncertainty.confidence_sequence import ConfidenceSequence


def stream_order(ids: Sequence[str], seed: int, entered: dict[str, int]) -> list[int]:
    """Positions of ``ids`` in stream order: by the round a unit entered (``entered``), then a seeded shuffle."""
    key = {u: random.Random(f"{seed}:{u}").random() for u in ids}
    return sorted(range(len(ids)), key=lambda i: (entered.get(ids[i], 0), key[ids[i]], ids[i]))


def per_unit(units: UnitValues) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's own headline and its weight (undefined values weigh 0)."""
    with np.errstate(all="ignore"):
        x = np.array([float(np.asarray(units.statistic(units.values[i : i + 1]))) for i in range(len(units.ids))])
    w = np.ones_like(x) if units.weights is None else np.asarray(units.weights, dtype=float).copy()
    undefined = ~np.isfinite(x)
    w[undefined] = 0.0
    x[undefined] = 0.0
    return x, w


def reproduction_problem(x: np.ndarray, w: np.ndarray, reported: float | None, unit: str) -> str | None:
    """None when the weighted mean of the per-unit values is the reported headline; otherwise why not."""
    own = float(np.sum(w * x) / np.sum(w)) if np.sum(w) > 0 else float("nan")
    if reported is None or not math.isfinite(own) or not math.isclose(own, reported, rel_tol=1e-9, abs_tol=1e-12):
        return (f"the weighted mean of its per-{unit} values is {number(own)}, the reported headline {number(reported)} "
                "(e.g. out-of-choice replies weigh templates unevenly across prompts): no sequence to decide on")
    return None


def decide_on_sequence(c: Criterion, label: str, cs: ConfidenceSequence, min_units: int) -> Decision:
    """``check``'s rule on the confidence sequence; inconclusive before ``min_units`` units or while it straddles."""
    satisfied, violated, threshold = criterion_words(c)
    level = f"{100 * (1 - cs.alpha):g}%"
    if not cs.defined:
        return Decision("inconclusive", f"{label}: the {level} confidence sequence is empty (every value rejected)")
    assert cs.low is not None and cs.high is not None
    head = (f"{label} is {number(cs.estimate)} ({level} confidence sequence {number(cs.low)} to {number(cs.high)}, "
            f"n = {cs.n} units, anytime-valid)")
    if cs.n < min_units:
        return Decision("inconclusive", f"{head}: fewer than {min_units} units, no decision yet")
    outcome = judge(c, cs.low, cs.high)
    if outcome == "pass":
        return Decision("pass", f"{head}: the whole sequence is {satisfied}.", "interval")
    if outcome == "fail":
        return Decision("fail", f"{head}: the whole sequence is {violated}.", "interval")
    return Decision("inconclusive", f"{head}: the sequence straddles {threshold}; more data would decide.", "interval")
