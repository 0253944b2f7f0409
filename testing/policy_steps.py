"""pytest-bdd step definitions of Gherkin acceptance policies: a team's own pytest runs the policy's .feature.

    # tests/test_release_gate.py
    from pytest_bdd import scenarios
    from culturebias.testing.policy_steps import *  # noqa: F401,F403  (the steps and their fixtures)

    scenarios("release_gate.feature")

(or ``pytest_plugins = ["culturebias.testing.policy_steps"]`` in a conftest.py). The steps are
``culturebias.adapters.policy.steps.STEPS``, the same that ``culturebias check`` reads; each
``Then`` step decides its criterion at once with ``culturebias.check``: a failing criterion
fails the scenario with the reason, an inconclusive one too unless the fixture
``policy_inconclusive`` says "pass" or "skip". Fixtures a test may override:
``policy_root`` (where relative run folders are, default the current directory),
``policy_runs`` / ``policy_baselines`` (benchmark → run folder, for "Given the kobbq run" and
"the baseline": culturebias check's --run and --baseline) and ``policy_inconclusive``.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from pytest_bdd import given, parsers, then

from culturebias.adapters.policy.steps import STEPS, Scenario, Step
from culturebias.domain.policy.model import Criterion, Policy

FIXTURES = ("policy_scenario", "policy_root", "policy_runs", "policy_baselines", "policy_inconclusive")


@pytest.fixture
def policy_root() -> Path:
    return Path.cwd()


@pytest.fixture
def policy_runs() -> dict[str, str]:
    return {}


@pytest.fixture
def policy_baselines() -> dict[str, str]:
    return {}


@pytest.fixture
def policy_inconclusive() -> str:
    return "fail"


@pytest.fixture
def policy_scenario(request: pytest.FixtureRequest) -> Scenario:
    return Scenario(name=request.node.name)


def _at(root: Path, folder: str | None) -> str | None:
    return None if folder is None else str(root / folder)


def decide(criterion: Criterion, root: Path, runs: dict[str, str], baselines: dict[str, str], inconclusive: str) -> Any:  # Any: JSON replies and step arguments
    """Check one criterion as culturebias check would; raises AssertionError when it does not pass."""
    from culturebias.bootstrap.check import check

    criterion = criterion.model_copy(update={"run": _at(root, criterion.run), "baseline": _at(root, criterion.baseline)})
    given_run = [] if criterion.run else [str(root / runs[criterion.benchmark])] if criterion.benchmark in runs else []
    baseline = [str(root / baselines[criterion.benchmark])] if criterion.needs_baseline and not criterion.baseline and \
        criterion.benchmark in baselines else None
    verdict = check(Policy(name=criterion.name, criteria=[criterion]), given_run, baseline).criteria[0]
    if verdict.outcome == "fail" or (verdict.outcome == "inconclusive" and inconclusive == "fail"):
        raise AssertionError(f"{verdict.outcome}: {verdict.reason}")
    if verdict.outcome == "inconclusive" and inconclusive == "skip":
        pytest.skip(f"inconclusive: {verdict.reason}")
    return verdict


def step_function(step: Step):
    """The pytest-bdd function of one step: the policy fixtures (required), then its regular expression's groups."""
    groups = list(step.regex.groupindex)

    def run(**given: Any) -> None:  # Any: JSON replies and step arguments
        scenario: Scenario = given["policy_scenario"]
        before = len(scenario.criteria)
        step.apply(scenario, {name: given.get(name) for name in groups}, step.template, None)
        if len(scenario.criteria) > before:
            decide(scenario.criteria[-1], given["policy_root"], given["policy_runs"], given["policy_baselines"],
                   given["policy_inconclusive"])

    keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD
    run.__signature__ = inspect.Signature(  # type: ignore[attr-defined]  # pytest-bdd reads it; functions do not declare it
        [inspect.Parameter(name, keyword) for name in FIXTURES]
        + [inspect.Parameter(name, keyword, default=None) for name in groups]
    )
    run.__name__ = f"policy_step_{step.keyword}_{STEPS.index(step)}"
    return run


for _step in STEPS:
    (given if _step.keyword == "given" else then)(parsers.re(_step.pattern))(step_function(_step))

__all__ = [*FIXTURES[1:], "policy_scenario", *(name for name in list(globals()) if name.startswith("pytestbdd_"))]
