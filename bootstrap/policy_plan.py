"""Wiring of ``culturebias plan BENCHMARK --policy POLICY`` (``application/plan_policy.py``): the policy read and
validated first, then a dry run on placeholder ports (no model built or asked) whose intervals count the units."""

from __future__ import annotations

from pathlib import Path

from culturebias.application.plan_policy import criteria_for, plan_policy
from culturebias.bootstrap.check import PolicyRef, RegistryCatalog, load_policy
from culturebias.bootstrap.settings import Settings
from culturebias.domain.policy.power import PolicyPlan


def plan_policy_evaluation(benchmark: str, settings: Settings, policy: PolicyRef | Path) -> PolicyPlan:
    """The sample size of each of ``policy``'s criteria on ``benchmark`` against the run ``settings`` would make
    (``--sample``/``--limit`` included); a ``PolicyError`` (exit 3) for a bad policy, before anything runs."""
    from culturebias.bootstrap.evaluation import planning_parts
    from culturebias.bootstrap.planning import UNIT_COUNT_RESAMPLES, dry_run_result

    read = load_policy(policy)
    criteria = criteria_for(read, benchmark, RegistryCatalog())
    settings, container, service, source = planning_parts(benchmark, settings)
    _, result = dry_run_result(benchmark, settings, container, service, source, resamples=UNIT_COUNT_RESAMPLES)
    drawn = result.summary.sample
    limit = result.summary.limit.n if result.summary.limit is not None else None
    sample = drawn.sentence() if drawn is not None else (f"--limit {limit}: the first {limit} items" if limit else None)
    population = drawn.units_in_population if drawn is not None else None
    if population is None and not limit:  # a full run: its units are the data's
        population = next((c.units_planned for c in plan_policy(read, benchmark, criteria, result.summary).criteria
                           if c.units_planned is not None and c.breakdown is None), None)
    return plan_policy(read, benchmark, criteria, result.summary, sample=sample, population=population)


def print_policy_plan(benchmark: str, settings: Settings, policy: str, form: str) -> int:
    """``culturebias plan BENCHMARK --policy POLICY [--format json]``: the plan printed; exit 0."""
    sized = plan_policy_evaluation(benchmark, settings, policy)
    print(sized.model_dump_json(indent=2) if form == "json" else sized.text())
    return 0
