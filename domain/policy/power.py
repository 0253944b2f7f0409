"""The sample a verdict needs, before the run (issue 33, point 3): units per criterion at 80 % power.

A threshold criterion is decided when its two-sided ``confidence`` interval
lies wholly on one side of the threshold. If the true value sits at distance
``d`` from the threshold (the headline's *planning margin*) and one unit
contributes a standard deviation ``sd`` (its *planning sd*), the estimate
over n units is about normal with standard error sd/√n, and the interval
clears the threshold with probability Φ(d√n/sd − z₁₋α/₂). Asking that
probability to be the power 1 − β (0.8) gives

    n = ⌈((z₁₋α/₂ + z₁₋β) · sd / d)²⌉,     α = 1 − confidence.

A non-inferiority criterion (``not_worse_than_baseline_by``) decides the
paired difference of two runs against its margin m: true difference 0, sd of
the difference √2·sd (no credit for the pairing: conservative), d = m. A
criterion decided on the point estimate needs no sample size. ``sd`` and
``d`` are declared per headline (``HeadlineMetric.planning``), each with
where it comes from; a headline without a declaration gets half its range as
sd (the largest standard deviation a value in [low, high] can have,
Popoviciu) and 5 % of its range as d. ``check`` uses the same formula with
the run's own spread (a pilot's variance: sd = half-width · √n / z) where its
interval has width.
"""

from __future__ import annotations

import dataclasses
import math

from pydantic import BaseModel, ConfigDict, Field
from scipy import stats

from culturebias.domain.headlines import HeadlineMetric, Planning
from culturebias.domain.uncertainty.interval import plural_unit
from culturebias.domain.policy.decide import Decision
from culturebias.domain.policy.model import Criterion
from culturebias.domain.uncertainty.interval import Interval

POWER = 0.8
DEFAULT_MARGIN_SHARE = 0.05  # of the range, for a headline without a declared planning margin


def units_needed(sd: float, margin: float, level: float, power: float = POWER) -> int:
    """n = ⌈((z₁₋α/₂ + z_power) · sd / margin)²⌉ (module doc); at least 2."""
    if sd <= 0 or margin <= 0:
        raise ValueError(f"a sample size needs sd > 0 and margin > 0, got sd={sd}, margin={margin}")
    z = float(stats.norm.ppf(1 - (1 - level) / 2)) + float(stats.norm.ppf(power))
    return max(2, math.ceil((z * sd / margin) ** 2 - 1e-9))


def planning_of(metric: HeadlineMetric) -> Planning | None:
    """The headline's declared planning assumption, else one from its range; None for an unbounded undeclared one."""
    if metric.planning is not None:
        return metric.planning
    if metric.low is None or metric.high is None or metric.high <= metric.low:
        return None
    width = metric.high - metric.low
    return Planning(sd=width / 2, margin=DEFAULT_MARGIN_SHARE * width,
                    source="not declared: half the metric's range as sd (the largest possible, Popoviciu), 5 % of "
                    "the range as margin")


class CriterionPlan(BaseModel):
    """One criterion's sample size: what ``plan --policy`` reports per criterion."""

    model_config = ConfigDict(extra="forbid")

    name: str
    benchmark: str
    metric: str
    breakdown: str | None = None
    decision: str = Field(description="the criterion in words, e.g. 'at most 0.05 with 95% confidence'")
    confidence: float | str
    planning_margin: float | None = Field(None, description="d: the assumed distance of the true value from the threshold")
    planning_sd: float | None = Field(None, description="sd: the assumed standard deviation one unit contributes")
    assumption: str = Field("", description="where sd and d come from")
    units_needed: int | None = Field(None, description="units to decide at 80 % power; null when the point decides")
    units_planned: int | None = Field(None, description="units the planned run holds for this criterion")
    unit: str = ""
    decidable: bool | None = Field(None, description="units_planned >= units_needed; null when unknown")
    reason: str = ""


def decision_words(c: Criterion) -> str:
    level = "the point estimate" if c.confidence == "point" else f"{100 * float(c.confidence):g}% confidence"
    if c.at_most is not None:
        return f"at most {c.at_most:g} with {level}"
    if c.at_least is not None:
        return f"at least {c.at_least:g} with {level}"
    if c.between is not None:
        return f"within [{c.between[0]:g}, {c.between[1]:g}] with {level}"
    return f"not worse than the baseline by more than {c.not_worse_than_baseline_by:g} with {level}"


def criterion_needs(c: Criterion, metric: HeadlineMetric) -> tuple[int | None, Planning | None, float | None]:
    """(units needed, the planning assumption, the sd used) for criterion ``c`` on ``metric``; (None, ...) when
    the point decides or no assumption exists."""
    planning = planning_of(metric)
    if c.confidence == "point" or planning is None:
        return None, planning, None
    if c.not_worse_than_baseline_by is not None:
        if c.not_worse_than_baseline_by <= 0:
            return None, planning, None
        sd = math.sqrt(2) * planning.sd
        return units_needed(sd, c.not_worse_than_baseline_by, float(c.confidence)), planning, sd
    return units_needed(planning.sd, planning.margin, float(c.confidence)), planning, planning.sd


def plan_criterion(
    c: Criterion, metric: HeadlineMetric, units_planned: int | None, unit: str, population: int | None = None
) -> CriterionPlan:
    """The criterion's sample size against ``units_planned``; ``population``: the units the whole data holds."""
    needed, planning, sd = criterion_needs(c, metric)
    base = CriterionPlan(
        name=c.name, benchmark=c.benchmark, metric=c.metric, breakdown=c.breakdown, decision=decision_words(c),
        confidence=c.confidence, planning_margin=(c.not_worse_than_baseline_by if c.needs_baseline else
                                                  planning.margin if planning else None),
        planning_sd=sd, assumption=planning.source if planning else "", units_needed=needed,
        units_planned=units_planned, unit=unit,
    )
    if c.confidence == "point":
        return base.model_copy(update={"decidable": True, "reason": "decided on the point estimate: any run decides it"})
    if needed is None:
        return base.model_copy(update={"reason": f"{metric.label} declares no planning assumption and has no range: "
                                                 "no sample size can be given"})
    units = plural_unit(unit, needed)
    if units_planned is None:
        return base.model_copy(update={"reason": f"needs about {needed:,} {units}; the planned run's count is not known"})
    decidable = units_planned >= needed
    at = (f"the margin {c.not_worse_than_baseline_by:g} (true difference 0)" if c.needs_baseline
          else f"a true value {planning.margin:g} from the threshold" if planning else "")
    if decidable:
        reason = f"needs about {needed:,} {units} for 80 % power at {at}; the run plans {units_planned:,}"
    else:
        reason = (f"needs about {needed:,} {units} for 80 % power at {at}; the run plans {units_planned:,}: "
                  f"{needed - units_planned:,} more")
        if population is not None and population < needed:
            reason += (f"; the whole data holds {population:,}: no run of it decides this at the planning margin "
                       "(a true value further from the threshold needs fewer)")
    return base.model_copy(update={"decidable": decidable, "reason": reason})


class PolicyPlan(BaseModel):
    """``culturebias plan BENCHMARK --policy POLICY``: each criterion's sample size against the planned run."""

    model_config = ConfigDict(extra="forbid")

    policy: str
    benchmark: str
    units_planned: int | None = Field(None, description="resampling units the planned run holds (its headline's)")
    unit: str = ""
    sample: str | None = Field(None, description="the --sample draw or --limit the plan counts, if any")
    power: float = POWER
    formula: str = "n = ceil(((z_{1-alpha/2} + z_{power}) * sd / d)^2); baseline criteria: sd * sqrt(2), d = the margin"
    criteria: list[CriterionPlan]
    notes: list[str] = Field(default_factory=list)

    def text(self) -> str:
        head = f"sample sizes for policy {self.policy!r} on {self.benchmark}"
        planned = (f"the planned run holds {self.units_planned:,} {plural_unit(self.unit, self.units_planned)}"
                   if self.units_planned is not None else "the planned run's units are not known")
        lines = [head + (f" ({self.sample})" if self.sample else ""), f"  {planned}",
                 f"  {self.formula} (power {self.power:g})"]
        for c in self.criteria:
            mark = {True: "decidable", False: "TOO SMALL", None: "unknown"}[c.decidable]
            where = f" ({c.breakdown})" if c.breakdown else ""
            lines.append(f"  - {c.name}: {c.metric}{where} {c.decision}: {mark}: {c.reason}")
            if c.assumption and c.units_needed is not None:
                lines.append(f"      sd {c.planning_sd:.3g}, d {c.planning_margin:g}: {c.assumption}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def missing_units(c: Criterion, metric: HeadlineMetric, interval: Interval) -> str | None:
    """For a straddling verdict: the units a run of this criterion needs, from the run's own spread where its
    interval has width (a pilot), and how many more this run would need; None when nothing can be said."""
    if c.confidence == "point" or interval.low is None or interval.high is None or interval.n < 2:
        return None
    planning = planning_of(metric)
    if planning is None:
        return None
    level = float(c.confidence)
    z = float(stats.norm.ppf(1 - (1 - level) / 2))
    half = (interval.high - interval.low) / 2
    pilot = half * math.sqrt(interval.n) / z if half > 0 and not interval.zero_width_resampling else None
    sd, source = (pilot, "sd from this run's interval") if pilot else (planning.sd, "the planning sd")
    margin = c.not_worse_than_baseline_by if c.needs_baseline else planning.margin
    if not margin or margin <= 0:
        return None
    if c.needs_baseline and pilot is None:
        sd = math.sqrt(2) * sd
    needed = units_needed(sd, margin, level)
    units = plural_unit(interval.unit, needed)
    had = f"this one had {interval.n:,}"
    if interval.n >= needed:
        return (f"a run of this policy needs about {needed:,} {units} to decide ({source}, 80 % power at a distance "
                f"{margin:g}), {had}: the true value is likely closer to the threshold than that")
    return (f"a run of this policy needs about {needed:,} {units} to decide ({source}, 80 % power at a distance "
            f"{margin:g}), {had}: {needed - interval.n:,} more")


def with_missing_units(decision: Decision, c: Criterion, metric: HeadlineMetric, interval: Interval | None) -> Decision:
    """A straddling verdict's reason with the units a run needs and how many more (``missing_units``)."""
    if decision.outcome != "inconclusive" or decision.decided_on != "interval" or interval is None:
        return decision
    sentence = missing_units(c, metric, interval)
    if sentence is None or not decision.reason.endswith("more data would decide."):
        return decision
    return dataclasses.replace(decision, reason=decision.reason.removesuffix("more data would decide.") + sentence + ".")
