"""Validity of a headline: the conditions under which its number means what its sentence says (PROTOCOLS §6).

A benchmark declares, per headline metric, named statistical rules (``ValidityRule``: the
statistic, its threshold, what it guards). Its summarizing path computes them on the run's own
answers and stores a ``ValidityBlock`` in summary.json (``RunSummary.validity``). A headline
guarded by a failed rule keeps its value in the summary, but every reader (the report's card,
``compare``, the leaderboard, the exports, ``culturebias check``) shows "not measured: <why>"
instead of the number, through ``headline_not_measured``. ``protocol.validity=off`` records the
results with ``enabled`` false: nothing is then blocked. A summary without the block (older than
schema 2.5) is "not assessed" and nothing is blocked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

ValiditySwitch = Literal["on", "off"]
VALIDITY_OFF_NOTE = (
    "validity rules off (protocol.validity=off): headlines are shown even where their answers do not depend on "
    "the content"
)


class ValidityRule(BaseModel):
    """One named condition on a benchmark's answers, declared with its threshold and the headlines it guards."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="the rule's name, as summaries, verdicts and reports cite it")
    guards: tuple[str, ...] = Field(description="the headline metrics (policy names) it guards")
    statistic: str = Field(description="what is computed from the run's answers")
    threshold: str = Field(description="when the rule fails, with its numbers")
    meaning: str = Field(description="one line: what a failure means")
    min_n: int = Field(0, description="the fewest units the rule decides on; below it the headline is not measured")

    def line(self) -> str:
        """The rule in one line, as ``culturebias list --metrics`` prints it."""
        return f"{self.name}: {self.statistic}; fails when {self.threshold} ({self.meaning})"


class RuleResult(BaseModel):
    """One rule applied to one run."""

    model_config = ConfigDict(extra="forbid")

    rule: str = Field(description="the rule's name (PROTOCOLS §6)")
    guards: list[str] = Field(description="the headline metrics it guards")
    statistic: float | None = Field(None, description="the rule's statistic on this run (null where it could not be computed)")
    threshold: float | None = Field(None, description="the threshold the statistic is held to")
    p_value: float | None = Field(None, description="the test's p-value, where the rule is a test")
    n: int = Field(description="the units the rule counted (answers, questions, triplets)")
    passed: bool | None = Field(description="true: the headline is readable; false: it is not measured; null: the "
                                "rule does not apply to this run (e.g. one option order)")
    reason: str = Field(description="the result in one sentence, with its numbers")


class ValidityBlock(BaseModel):
    """The validity rules of a run's headlines and their results."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="false under protocol.validity=off: the results are recorded, nothing is blocked")
    results: list[RuleResult] = Field(default_factory=list, description="each rule's result on this run")

    def failed(self) -> list[RuleResult]:
        return [r for r in self.results if r.passed is False]


def validity_block(results: Sequence[RuleResult], switch: ValiditySwitch) -> ValidityBlock:
    return ValidityBlock(enabled=switch == "on", results=list(results))


def too_few(rule: ValidityRule, n: int, what: str) -> RuleResult:
    """The result of a rule with fewer units than it decides on: the headline is not measured, never guessed."""
    return RuleResult(
        rule=rule.name, guards=list(rule.guards), n=n, passed=False,
        reason=f"too few {what} (n={n}, need >= {rule.min_n})",
    )


class _Summary(Protocol):
    not_measured: str | None
    validity: ValidityBlock | None


def failed_rules(summary: object, metric_name: str) -> list[RuleResult]:
    """The enabled rules that failed and guard ``metric_name`` (none for a summary without the block)."""
    block = getattr(summary, "validity", None)  # any RunSummary, or a partial one (repeats) without the field
    if not isinstance(block, ValidityBlock) or not block.enabled:
        return []
    return [r for r in block.results if r.passed is False and metric_name in r.guards]


def rule_reason(result: RuleResult) -> str:
    return f"{result.rule}: {result.reason}"


def headline_not_measured(summary: _Summary, metric_name: str) -> str | None:
    """Why this headline of the run cannot be read (the run's ``not_measured``, or a failed validity rule guarding
    it, with the rule's name and numbers); None when it can. Every reader shows "not measured: <this>"."""
    if summary.not_measured:
        return summary.not_measured
    failed = failed_rules(summary, metric_name)
    return "; ".join(rule_reason(r) for r in failed) if failed else None


def validity_state(summary: _Summary) -> str:
    """One line on the run's validity rules for a card: not assessed, off, all passed, or which failed."""
    block = summary.validity
    if block is None:
        return "validity not assessed (summary older than 2.5)"
    if not block.enabled:
        return VALIDITY_OFF_NOTE
    failed = block.failed()
    if not failed:
        return f"validity rules passed ({', '.join(r.rule for r in block.results if r.passed)})" if block.results else ""
    return "validity rules failed: " + "; ".join(f"{rule_reason(r)} (guards {', '.join(r.guards)})" for r in failed)


def validity_notes(block: ValidityBlock) -> list[str]:
    """The run's notes on its validity: which headlines are not measured and why, or that the rules are off."""
    failed = block.failed()
    if not block.enabled:
        would = f" (they would have blocked: {'; '.join(rule_reason(r) for r in failed)})" if failed else ""
        return [VALIDITY_OFF_NOTE + would]
    guarded = sorted({m for r in failed for m in r.guards})
    if not guarded:
        return []
    return [f"not measured: {', '.join(guarded)}: " + "; ".join(rule_reason(r) for r in failed)]


def binomial_above(
    rule: ValidityRule, hits: int, n: int, chance: float, statistic: float, threshold: float,
    reason: Callable[[float, bool], str], alpha: float = 0.05,
) -> RuleResult:
    """A rule that passes when ``hits`` of ``n`` is significantly above ``chance`` (one-sided binomial test at
    ``alpha``); ``reason(p, passed)`` words the result."""
    from scipy import stats

    p = float(stats.binomtest(hits, n, min(chance, 1.0), alternative="greater").pvalue)
    passed = p < alpha
    return RuleResult(rule=rule.name, guards=list(rule.guards), statistic=statistic, threshold=threshold, p_value=p, n=n,
                      passed=passed, reason=reason(p, passed))
