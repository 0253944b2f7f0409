"""What checking a policy gives: one verdict per criterion and the policy's verdict (``culturebias schema verdict``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from culturebias.domain.caveats import Caveat
from culturebias.domain.policy.model import Criterion
from culturebias.domain.sequential_block import SequentialBlock
from culturebias.domain.uncertainty.interval import Interval

# 1.1: each checked run carries its caveats (``runs[].caveats``, domain/caveats.py) and a criterion that decided on a
#      limited or sampled run because of ``allow_limited`` says so (``criteria[].allowed_limited``); 1.0 files load.
VERDICT_SCHEMA_VERSION = "1.1"
Outcome = Literal["pass", "fail", "inconclusive"]
InconclusiveAs = Literal["inconclusive", "fail", "pass"]
# culturebias check: every criterion passes, one fails, none fails but some are inconclusive.
EXIT_CODES: dict[Outcome, int] = {"pass": 0, "fail": 1, "inconclusive": 2}


class CheckedRun(BaseModel):
    """A run a policy was checked on: what identifies it."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["run", "baseline"] = Field(description="Checked against the policy, or the baseline of a criterion.")
    benchmark: str = Field(description="The run's benchmark.")
    run_id: str = Field(description="The run's id (summary.json `run_id`).")
    where: str = Field(description="The folder, summary.json or store the run was read from.")
    models: dict[str, str] = Field(description="role -> 'backend:model' of every model port the run built.")
    data_fingerprint: str = Field(description="The fingerprint of the data the run read.")
    config_fingerprint: str = Field(description="The fingerprint of the run's configuration.")
    limited: str | None = Field(default=None, description="Why the run covered only part of the data, if it did.")
    caveats: list[Caveat] = Field(
        default_factory=list,
        description="Everything that limits what the run's numbers say: limited, sampled, small model, judge given up, "
        "a mode other than the paper's, few units, not measured.",
    )


class CriterionVerdict(BaseModel):
    """One criterion decided on one run (and its baseline)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The criterion's name.")
    outcome: Outcome = Field(description="pass: the whole interval satisfies it; fail: the whole interval violates it; "
                             "inconclusive: it straddles the threshold, or the run cannot decide (the reason says why).")
    reason: str = Field(description="The decision in words: value, interval, n and why it passes, fails or cannot decide.")
    criterion: Criterion = Field(description="The criterion as declared.")
    metric_label: str = Field(description="The headline metric in words (with its breakdown).")
    estimate: Literal["value", "difference"] = Field(
        description="What `value` and `interval` are: the metric's value, or (baseline criteria) this run's distance "
        "from ideal minus the baseline's (positive: worse)."
    )
    value: float | None = Field(default=None, description="The estimate decided on; null where undefined.")
    interval: Interval | None = Field(default=None, description="Its interval, where one was decided on or read.")
    n: int | None = Field(default=None, description="Resampling units behind the interval (templates, triplets ...).")
    unit: str | None = Field(default=None, description="What one resampling unit is.")
    decided_on: Literal["interval", "point"] | None = Field(
        default=None, description="Whether the outcome came from the interval or the point estimate (null: undecided)."
    )
    run_id: str | None = Field(default=None, description="The run the criterion read.")
    baseline_run_id: str | None = Field(default=None, description="The baseline run of a baseline criterion.")
    allowed_limited: str | None = Field(
        default=None,
        description="Set when the criterion decided on a limited or sampled run only because allow_limited = true: "
        "why that run covered only part of the data.",
    )


class OutcomeCounts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    passed: int = Field(description="Criteria that pass.")
    failed: int = Field(description="Criteria that fail.")
    inconclusive: int = Field(description="Criteria that are inconclusive.")


class PolicyVerdict(BaseModel):
    """A policy checked on runs: the overall outcome and every criterion's verdict."""

    model_config = ConfigDict(extra="forbid")

    schema_version: str = Field(default=VERDICT_SCHEMA_VERSION, description="Version of this JSON layout.")
    policy: str = Field(description="The policy's name.")
    source: str | None = Field(default=None, description="The policy file.")
    checked_at: str = Field(description="When the policy was checked (UTC, ISO 8601).")
    culturebias_version: str = Field(description="The culturebias that decided.")
    outcome: Outcome = Field(description="fail if any criterion fails; else inconclusive if any is; else pass.")
    counts: OutcomeCounts = Field(description="How many criteria had each outcome.")
    runs: list[CheckedRun] = Field(description="Every run read, checked and baseline.")
    criteria: list[CriterionVerdict] = Field(description="One verdict per criterion, in the policy's order.")
    sequential: SequentialBlock | None = Field(
        default=None, description="Set when decided in rounds (check --sequential): the method, rounds, answers used."
    )

    def exit_code(self, inconclusive: InconclusiveAs = "inconclusive") -> int:
        """0 every criterion passes, 1 one fails, 2 none fails but some are inconclusive (``inconclusive`` maps those)."""
        return EXIT_CODES[overall([v.outcome for v in self.criteria], inconclusive)]

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)


def overall(outcomes: list[Outcome], inconclusive: InconclusiveAs = "inconclusive") -> Outcome:
    mapped = [inconclusive if o == "inconclusive" else o for o in outcomes]
    if "fail" in mapped:
        return "fail"
    if "inconclusive" in mapped:
        return "inconclusive"
    return "pass"


def counts_of(verdicts: list[CriterionVerdict]) -> OutcomeCounts:
    outcomes = [v.outcome for v in verdicts]
    return OutcomeCounts(
        passed=outcomes.count("pass"), failed=outcomes.count("fail"), inconclusive=outcomes.count("inconclusive")
    )


def verdict_schema() -> dict[str, object]:
    """The JSON Schema of a verdict (``culturebias schema verdict``, ``check --json``)."""
    return PolicyVerdict.model_json_schema(mode="serialization")
