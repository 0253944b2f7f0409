"""A policy's criteria as one-threshold gates, for tools whose pass criterion is one number against one threshold.

eval-hub (and MLflow's ``MetricThreshold``) pass a benchmark when one named
metric is at most, or at least, a threshold. A culturebias criterion passes
when its *whole interval* satisfies it (``domain.policy.decide``); the same
rule, written as thresholds on the interval's bounds:

- ``at_most x``: the interval's high bound at most x (``<metric>_ci_high``);
- ``at_least x``: the interval's low bound at least x (``<metric>_ci_low``);
- ``between [a, b]``: both (two gates);
- ``not_worse_than_baseline_by m``: the paired difference's high bound at most m
  (``<metric>_vs_baseline_ci_high``);
- ``confidence = "point"``: the estimate itself instead of a bound.

A criterion passes exactly when all its gates pass. The gates' values are read
from the verdict ``check`` gave (never recomputed here); a criterion the run
could not decide (undefined value, unusable interval, limited run) has no gate
value, so no tool can count it as passed: its outcome and reason travel beside.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from culturebias.domain.policy.model import Criterion, Policy
from culturebias.domain.policy.verdict import CriterionVerdict

Bound = Literal["low", "high", "point"]


@dataclass(frozen=True)
class Gate:
    """One threshold of one criterion: ``metric`` (a name unique in the policy) against ``threshold``."""

    criterion: str
    metric: str  # "<criterion>: <headline>[<breakdown>]_ci_high" and the like
    bound: Bound  # which number of the verdict the gate reads
    threshold: float
    lower_is_better: bool

    def passes(self, value: float) -> bool:
        return value <= self.threshold if self.lower_is_better else value >= self.threshold


def _key(c: Criterion) -> str:
    metric = c.metric if c.breakdown is None else f"{c.metric}[{c.breakdown}]"
    return f"{metric}_vs_baseline" if c.needs_baseline else metric


def criterion_gates(c: Criterion) -> list[Gate]:
    """The gates of one criterion (two for ``between``, one otherwise)."""
    key = f"{c.name}: {_key(c)}"
    point = c.confidence == "point"

    def gate(bound: Bound, threshold: float, lower_is_better: bool) -> Gate:
        shown: Bound = "point" if point else bound
        suffix = "" if point else f"_ci_{bound}"
        return Gate(c.name, f"{key}{suffix}", shown, float(threshold), lower_is_better)

    if c.at_most is not None:
        return [gate("high", c.at_most, True)]
    if c.at_least is not None:
        return [gate("low", c.at_least, False)]
    if c.between is not None:
        low, high = c.between
        if point:  # one estimate against both ends: two gates on the same number need two names
            return [
                Gate(c.name, f"{key}_above_low", "point", float(low), False),
                Gate(c.name, f"{key}_below_high", "point", float(high), True),
            ]
        return [gate("low", low, False), gate("high", high, True)]
    assert c.not_worse_than_baseline_by is not None
    return [gate("high", c.not_worse_than_baseline_by, True)]


def policy_gates(policy: Policy) -> list[Gate]:
    """Every criterion's gates, in the policy's order."""
    return [g for c in policy.criteria for g in criterion_gates(c)]


def gate_value(gate: Gate, verdict: CriterionVerdict) -> float | None:
    """The number ``check`` decided ``gate``'s criterion on (a bound of its interval, or its estimate); None when
    the criterion was not decided on a number (its outcome is then inconclusive and its reason says why)."""
    if verdict.decided_on is None:
        return None
    if gate.bound == "point" or verdict.decided_on == "point":
        return verdict.value
    interval = verdict.interval
    if interval is None:
        return None
    return interval.low if gate.bound == "low" else interval.high
