"""``culturebias plan BENCHMARK --policy POLICY``: the units each criterion needs, against the run as planned.

The policy is validated first (an unknown benchmark or metric: ``PolicyError``
with the nearest names, before any dry run and with nothing written). The
units the planned run holds come from its dry run (placeholder answers, no
model): each criterion's headline interval there has the ``n`` the real run's
will have (the templates, sentence pairs, BEIs or triplets drawn under
``--sample`` / ``--limit``), read per breakdown where the criterion names one.
The sample sizes are ``domain/policy/power.py``'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from culturebias.application.check import validate_policy
from culturebias.domain.errors import PolicyError
from culturebias.domain.headlines import HeadlineMetric, interval_of
from culturebias.domain.policy.model import Criterion, Policy
from culturebias.domain.policy.power import PolicyPlan, plan_criterion
from culturebias.domain.summary import RunSummary
from culturebias.ports.policy import BenchmarkCatalog

Planned = list[tuple[Criterion, HeadlineMetric]]


def criteria_for(policy: Policy, benchmark: str, catalog: BenchmarkCatalog) -> Planned:
    """The policy's criteria on ``benchmark`` with their metrics; a ``PolicyError`` for a bad policy (all its
    criteria are checked, whatever their benchmark) or one without a criterion on ``benchmark``."""
    metrics = validate_policy(policy, catalog)
    chosen = [(c, metrics[c.name]) for c in policy.criteria if c.benchmark == benchmark]
    if not chosen:
        raise PolicyError(
            f"policy {policy.name!r} has no criterion on {benchmark} (it reads {', '.join(policy.benchmarks())}): "
            f"plan one of those benchmarks"
        )
    return chosen


def plan_policy(
    policy: Policy, benchmark: str, criteria: Planned, planned_run: object | None, *, sample: str | None = None,
    population: int | None = None, notes: Sequence[str] = (),
) -> PolicyPlan:
    """Each criterion's sample size; ``planned_run`` is the dry run's summary (its intervals' n), None: unknown;
    ``population``: the units the whole data holds (said where a criterion needs more)."""
    plans = []
    for c, metric in criteria:
        interval = None
        if planned_run is not None:
            try:
                interval = interval_of(planned_run, metric)
            except KeyError:  # a breakdown the planned run does not keep
                interval = None
        plans.append(plan_criterion(c, metric, interval.n if interval is not None else None,
                                    interval.unit if interval is not None else "",
                                    population if c.breakdown is None else None))
    overall = next((p for (c, _), p in zip(criteria, plans) if c.breakdown is None and p.units_planned is not None), None)
    first = overall or next((p for p in plans if p.units_planned is not None), None)
    extra = list(notes)
    if any(c.breakdown for c, _ in criteria):
        extra.append("a breakdown criterion counts the units of its own category or label")
    extra.append("units planned: the dry run's units with every answer in choice; the run's own may be fewer "
                 "(out-of-choice answers, invalid triplets)")
    return PolicyPlan(
        policy=policy.name, benchmark=benchmark, units_planned=first.units_planned if first else None,
        unit=first.unit if first else "", sample=sample, criteria=plans, notes=extra,
    )


def plan_from_dry_run(policy: Policy, benchmark: str, criteria: Planned, summary: RunSummary) -> PolicyPlan:
    """The plan against the planned run's dry-run ``summary``: its drawn sample (or ``--limit``) said, and the
    units of the whole data where the run is of all of it (a full run's units are the data's)."""
    drawn = summary.sample
    limit = summary.limit.n if summary.limit is not None else None
    sample = drawn.sentence() if drawn is not None else (f"--limit {limit}: the first {limit} items" if limit else None)
    population = drawn.units_in_population if drawn is not None else None
    if population is None and not limit:
        population = next((c.units_planned for c in plan_policy(policy, benchmark, criteria, summary).criteria
                           if c.units_planned is not None and c.breakdown is None), None)
    return plan_policy(policy, benchmark, criteria, summary, sample=sample, population=population)
