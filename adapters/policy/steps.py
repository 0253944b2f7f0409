"""The steps of a Gherkin policy: one vocabulary for ``culturebias check`` and for pytest-bdd.

A scenario names a run (``Given``) and states criteria on it (``Then``/``And``);
each assertion step is one criterion. ``Scenario`` collects what the steps
say; ``match`` finds the step a line is, and ``nearest`` the known step an
unknown line is closest to. ``culturebias.testing.policy_steps`` defines one
pytest-bdd step per entry of ``STEPS`` with the same regular expression.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from culturebias.domain.policy.model import Criterion

NUMBER = r"-?\d+(?:\.\d+)?"
CONFIDENCE = rf"(?: with (?P<percent>{NUMBER})% confidence| on the (?P<point>point) estimate)?"
METRIC = r"its (?P<metric>[\w.]+)(?: in (?P<kind>\w+) \"(?P<key>[^\"]+)\")?"
SUBJECT = rf"(?:{METRIC}|it)"  # "it": the metric of the step before
Keyword = Literal["given", "then"]


@dataclass
class Scenario:
    """What the steps of one scenario have said so far."""

    name: str
    source: str | None = None  # "file:line" of the scenario
    benchmark: str | None = None
    run: str | None = None  # a run folder the scenario names; None: the run given for its benchmark
    allow_limited: bool = False
    criteria: list[Criterion] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)  # the assertion steps' texts, for criterion names

    def add(self, text: str, decision: dict[str, Any], groups: dict[str, Any], line: str | None) -> Criterion:  # Any: a step's regex groups (text and parsed numbers)
        if self.benchmark is None:
            raise ValueError("no run named yet: start the scenario with 'Given the BENCHMARK run in \"FOLDER\"'")
        percent, point = groups.get("percent"), groups.get("point")
        confidence: float | str = "point" if point else (float(percent) / 100 if percent else 0.95)
        breakdown = f"{groups['kind']}:{groups['key']}" if groups.get("kind") else None
        criterion = Criterion(
            name=self.name,
            benchmark=self.benchmark,
            metric=groups.get("metric") or "",
            breakdown=breakdown,
            confidence=confidence,
            allow_limited=self.allow_limited,
            run=self.run,
            source=line,
            **decision,
        )
        self.criteria.append(criterion)
        self.steps.append(text)
        return criterion

    def named(self) -> list[Criterion]:
        """The criteria, named after the scenario (and their step where it states several)."""
        if len(self.criteria) == 1:
            return self.criteria
        return [c.model_copy(update={"name": f"{self.name}: {text}"}) for c, text in zip(self.criteria, self.steps)]


Apply = Callable[[Scenario, dict[str, Any], str, "str | None"], None]  # Any: a step's regex groups (text and parsed numbers)


@dataclass(frozen=True)
class Step:
    keyword: Keyword
    template: str  # how the step reads, as `culturebias check --steps` lists it
    pattern: str
    meaning: str
    apply: Apply
    example: str  # a line of this step, which an unknown line is compared with

    @property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern)


def _run(scenario: Scenario, groups: dict[str, Any], text: str, line: str | None) -> None:  # Any: a step's regex groups (text and parsed numbers)
    scenario.benchmark, scenario.run = groups["benchmark"], groups.get("path")


def _limited(scenario: Scenario, groups: dict[str, Any], text: str, line: str | None) -> None:  # Any: a step's regex groups (text and parsed numbers)
    scenario.allow_limited = True


def _threshold(name: str) -> Apply:
    def apply(scenario: Scenario, groups: dict[str, Any], text: str, line: str | None) -> None:  # Any: a step's regex groups (text and parsed numbers)
        if name == "between":
            scenario.add(text, {"between": (float(groups["low"]), float(groups["high"]))}, groups, line)
        else:
            scenario.add(text, {name: float(groups["value"])}, groups, line)

    return apply


def _baseline(scenario: Scenario, groups: dict[str, Any], text: str, line: str | None) -> None:  # Any: a step's regex groups (text and parsed numbers)
    if scenario.benchmark is not None and groups.get("benchmark") not in (None, scenario.benchmark):
        raise ValueError(f"the baseline is a {groups['benchmark']} run, the scenario's run a {scenario.benchmark} run")
    if groups.get("metric") is None:  # "it is not worse ...": the metric of the step before
        if not scenario.criteria:
            raise ValueError("'it' is the metric of the step before, and there is none: say 'its METRIC is not worse ...'")
        previous = scenario.criteria[-1]
        kind, _, key = (previous.breakdown or "").partition(":")
        groups = {**groups, "metric": previous.metric, "kind": kind or None, "key": key or None}
    decision = {"not_worse_than_baseline_by": float(groups["margin"])}
    criterion = scenario.add(text, decision, groups, line)
    if groups.get("path"):
        scenario.criteria[-1] = criterion.model_copy(update={"baseline": groups["path"]})


STEPS: tuple[Step, ...] = (
    Step("given", 'the {benchmark} run in "{folder}"', r'the (?P<benchmark>[\w-]+) run in "(?P<path>[^"]+)"',
         "the run the scenario checks: a run folder or summary.json (relative to the current directory)",
         _run, 'the kobbq run in "runs/v2"'),
    Step("given", "the {benchmark} run", r"the (?P<benchmark>[\w-]+) run",
         "the run given for that benchmark (culturebias check --run DIR)", _run, "the kobbq run"),
    Step("given", "limited runs are allowed", r"limited runs are allowed",
         "decide on a limited or category-sampled run too (allow_limited = true)", _limited, "limited runs are allowed"),
    Step("then", "its {metric} is at most {x} [with {p}% confidence | on the point estimate]",
         rf"{METRIC} is at most (?P<value>{NUMBER}){CONFIDENCE}",
         "the whole interval is at most x (95% unless said; 'on the point estimate' decides on the value)",
         _threshold("at_most"), "its diff_bias_amb is at most 0.05 with 95% confidence"),
    Step("then", "its {metric} is at least {x} [with {p}% confidence | on the point estimate]",
         rf"{METRIC} is at least (?P<value>{NUMBER}){CONFIDENCE}", "the whole interval is at least x",
         _threshold("at_least"), "its acc_amb is at least 0.9 with 95% confidence"),
    Step("then", "its {metric} is between {low} and {high} [with {p}% confidence | on the point estimate]",
         rf"{METRIC} is between (?P<low>{NUMBER}) and (?P<high>{NUMBER}){CONFIDENCE}",
         "the whole interval lies within [low, high]", _threshold("between"),
         "its diff_bias_amb is between -0.05 and 0.05 with 95% confidence"),
    Step("then", 'it|its {metric} is not worse than the {benchmark} run in "{folder}" by more than {margin} [...]',
         rf'{SUBJECT} is not worse than the (?P<benchmark>[\w-]+) run in "(?P<path>[^"]+)" by more than '
         rf"(?P<margin>{NUMBER}){CONFIDENCE}",
         "paired non-inferiority against that run on the units both share ('worse' follows the metric's direction)",
         _baseline, 'it is not worse than the kobbq run in "runs/v1" by more than 0.02'),
    Step("then", "it|its {metric} is not worse than the baseline by more than {margin} [...]",
         rf"{SUBJECT} is not worse than the baseline by more than (?P<margin>{NUMBER}){CONFIDENCE}",
         "paired non-inferiority against the baseline given (culturebias check --baseline DIR)",
         _baseline, "it is not worse than the baseline by more than 0.02"),
)


def match(text: str, keyword: Keyword | None = None) -> tuple[Step, dict[str, Any]] | None:  # Any: a step's regex groups (text and parsed numbers)
    """The step ``text`` is (of ``keyword``'s kind, where given) and its groups; None if it is none of them."""
    for step in STEPS:
        if keyword is not None and step.keyword != keyword:
            continue
        found = step.regex.fullmatch(text)
        if found:
            return step, found.groupdict()
    return None


def nearest(text: str) -> Step:
    """The known step an unknown line reads most like."""
    def score(step: Step) -> float:
        return difflib.SequenceMatcher(None, text, step.example).ratio()

    return max(STEPS, key=score)


def steps_text() -> str:
    """The shipped steps, as ``culturebias check --steps`` prints them."""
    lines = []
    for step in STEPS:
        lines.append(f"{step.keyword.capitalize():<6} {step.template}")
        lines.append(f"       {step.meaning}")
    return "\n".join(lines)
