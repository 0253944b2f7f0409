"""Wiring of ``culturebias plan BENCHMARK --policy POLICY`` (``application/plan_policy.py``): the policy read and
validated first, then a dry run on placeholder ports (no model built or asked) whose intervals count the units."""

from __future__ import annotations

from pathlib import Path

from culturebias.application.plan_policy import criteria_for, plan_from_dry_run
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
    return plan_from_dry_run(read, benchmark, criteria, result.summary)


def print_policy_plan(benchmark: str, settings: Settings, policy: str, form: str) -> int:
    """``culturebias plan BENCHMARK --policy POLICY [--format json]``: the plan printed; exit 0."""
    sized = plan_policy_evaluation(benchmark, settings, policy)
    print(sized.model_dump_json(indent=2) if form == "json" else sized.text())
    return 0
