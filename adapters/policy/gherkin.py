"""A policy written in Gherkin (``.feature``): the Feature is the policy, each scenario's assertions its criteria.

The subset a policy needs is read here (no Gherkin library at run time):
``Feature:`` with its description, ``Background:``, ``Scenario:`` (or
``Example:``), steps (``Given``/``When``/``Then``/``And``/``But``/``*``),
tags and ``#`` comments. Scenario outlines, rules, doc strings and data
tables are refused naming the line, as is any step that is not one of
``adapters.policy.steps.STEPS`` (with the nearest known step).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from culturebias.adapters.policy.steps import Scenario, match, nearest
from culturebias.adapters.policy.files import policy_text
from culturebias.domain.errors import PolicyError
from culturebias.domain.policy.model import Policy

STEP_KEYWORDS = {"Given": "given", "When": "when", "Then": "then", "And": None, "But": None, "*": None}
REFUSED = {
    "Scenario Outline:": "a scenario outline (write one Scenario per case)",
    "Scenario Template:": "a scenario template (write one Scenario per case)",
    "Examples:": "an Examples table (write one Scenario per case)",
    "Scenarios:": "an Examples table (write one Scenario per case)",
    "Rule:": "a Rule (list the scenarios under the Feature)",
}


def _error(file: str, line: int, message: str) -> PolicyError:
    return PolicyError(message, file=file, line=line)


def _describe(message: Exception) -> str:
    if isinstance(message, ValidationError):
        first = message.errors()[0]
        return str(first.get("msg", message)).removeprefix("Value error, ")
    return str(message)


def read_gherkin_policy(path: str | Path) -> Policy:
    return parse_gherkin_policy(policy_text(path), str(path))


def parse_gherkin_policy(text: str, file: str = "<policy>") -> Policy:
    feature: str | None = None
    background: list[tuple[int, str, str]] = []  # (line, keyword, text) of the Background's steps
    scenarios: list[Scenario] = []
    section: str | None = None  # "background" | "scenario" | None (the Feature's description)
    previous: str | None = None  # the keyword kind And/But continue
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("@"):
            continue
        refused = next((what for head, what in REFUSED.items() if line.startswith(head)), None)
        if refused:
            raise _error(file, number, f"{refused} is not supported in a policy")
        if line.startswith('"""') or line.startswith("```") or line.startswith("|"):
            raise _error(file, number, "doc strings and data tables are not supported in a policy step")
        if line.startswith("Feature:"):
            if feature is not None:
                raise _error(file, number, "a second Feature: one policy per file")
            feature = line.removeprefix("Feature:").strip() or Path(file).stem
            continue
        if feature is None:
            raise _error(file, number, f"expected 'Feature: NAME' first, found {line!r}")
        if line.startswith("Background:"):
            if scenarios:
                raise _error(file, number, "the Background comes before the first Scenario")
            section, previous = "background", None
            continue
        head = next((h for h in ("Scenario:", "Example:") if line.startswith(h)), None)
        if head is not None:
            name = line.removeprefix(head).strip()
            if not name:
                raise _error(file, number, "a Scenario needs a name (it names its criteria in every output)")
            scenarios.append(Scenario(name=name, source=f"{file}:{number}"))
            section, previous = "scenario", None
            for step_line, keyword, step_text in background:
                _apply(scenarios[-1], keyword, step_text, file, step_line)
            continue
        keyword, _, rest = line.partition(" ")
        if keyword not in STEP_KEYWORDS or section is None:
            if section is None:
                continue  # free text describing the Feature
            raise _error(file, number, f"expected a step (Given/Then/And ...), a Scenario or a comment, found {line!r}")
        kind = STEP_KEYWORDS[keyword] or previous
        if keyword == "*":  # any kind: the one its text is
            found = match(rest.strip())
            kind = found[0].keyword if found is not None else (previous or "then")
        if kind is None:
            raise _error(file, number, f"{keyword!r} continues a step, and there is none before it")
        if kind == "when":
            raise _error(file, number, "a policy has no When steps: Given names a run, Then states a criterion")
        previous = kind
        if section == "background":
            if kind != "given":
                raise _error(file, number, "a Background holds Given steps only")
            background.append((number, kind, rest.strip()))
        else:
            _apply(scenarios[-1], kind, rest.strip(), file, number)
    if feature is None:
        raise _error(file, 1, "expected 'Feature: NAME'; the file has none")
    empty = next((s for s in scenarios if not s.criteria), None)
    if empty is not None:
        raise PolicyError(f"scenario {empty.name!r} states no criterion (no Then step)", file=file,
                          line=int(str(empty.source).rpartition(":")[2]))
    criteria = [c for scenario in scenarios for c in scenario.named()]
    if not criteria:
        raise _error(file, 1, "no criterion: a Scenario needs a Then step (e.g. 'Then its diff_bias_amb is at most 0.05')")
    try:
        return Policy(name=feature, source=file, criteria=criteria)
    except ValidationError as error:
        raise _error(file, 1, _describe(error)) from None


def _apply(scenario: Scenario, kind: str, text: str, file: str, number: int) -> None:
    found = match(text, kind)  # type: ignore[arg-type]  # kind is a Gherkin keyword the parser read, one of Keyword's
    if found is None:
        other = match(text)
        if other is not None:
            raise _error(file, number, f"{text!r} is a {other[0].keyword.capitalize()} step, not a {kind.capitalize()} step")
        raise _error(
            file, number,
            f"unknown step {text!r}; the nearest known step is '{nearest(text).template}' (culturebias check --steps lists them)",
        )
    step, groups = found
    try:
        step.apply(scenario, groups, text, f"{file}:{number}")
    except ValueError as error:
        raise _error(file, number, _describe(error)) from None
