"""A policy and its criteria, as the TOML and Gherkin forms declare them (one model for both)."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Confidence = float | Literal["point"]
DECISIONS = ("at_most", "at_least", "between", "not_worse_than_baseline_by")
BREAKDOWN_HOW = (
    "A breakdown 'KIND:VALUE' (e.g. 'category:age', 'label:ST') reads the metric in the summary's per-KIND block: "
    "the segment 'overall' of the headline's value and interval paths becomes 'by_KIND.VALUE' "
    "(metrics.overall.diff_bias_amb.mean -> metrics.by_category.age.diff_bias_amb.mean)."
)


class Criterion(BaseModel):
    """One acceptance criterion on one headline metric of one benchmark."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="Shown in every output (terminal, JUnit testcase, JSON, model card).")
    benchmark: str = Field(description="The registered benchmark whose run the criterion reads (e.g. 'kobbq').")
    metric: str = Field(description="One of the benchmark's headline metrics (`culturebias list`; e.g. 'diff_bias_amb').")
    breakdown: str | None = Field(default=None, description=BREAKDOWN_HOW)
    at_most: float | None = Field(default=None, description="Pass when the whole interval is at most this value.")
    at_least: float | None = Field(default=None, description="Pass when the whole interval is at least this value.")
    between: tuple[float, float] | None = Field(
        default=None, description="Pass when the whole interval lies within [low, high]."
    )
    not_worse_than_baseline_by: float | None = Field(
        default=None,
        ge=0,
        description="Non-inferiority margin against the baseline run (--baseline): pass when the whole paired "
        "interval of (this run's distance from ideal - the baseline's) is at most this margin. 'Worse' follows the "
        "metric's direction (lower, higher, or further from its target).",
    )
    confidence: Confidence = Field(
        default=0.95,
        description="Decide on the interval of this level (the run's stored interval must have it), or 'point' to "
        "decide on the estimate alone.",
    )
    allow_limited: bool = Field(
        default=False,
        description="Decide on a limited (--limit) or category-sampled run too; otherwise such a run is inconclusive.",
    )
    run: str | None = Field(
        default=None, description="The run folder this criterion reads (Gherkin names it); None: the run given for its benchmark."
    )
    baseline: str | None = Field(
        default=None, description="The baseline run folder (Gherkin names it); None: the baseline given for its benchmark."
    )
    source: str | None = Field(default=None, description="Where the criterion is declared ('file:line'), for messages.")

    @field_validator("confidence")
    @classmethod
    def _level(cls, value: Confidence) -> Confidence:
        if value != "point" and not 0 < float(value) < 1:
            raise ValueError(f"confidence is a level between 0 and 1 (e.g. 0.95) or \"point\", got {value!r}")
        return value

    @field_validator("breakdown")
    @classmethod
    def _breakdown(cls, value: str | None) -> str | None:
        if value is not None:
            kind, _, key = value.partition(":")
            if not kind or not key:
                raise ValueError(f"a breakdown is 'KIND:VALUE' (e.g. 'category:age'), got {value!r}")
        return value

    @model_validator(mode="after")
    def _one_decision(self) -> "Criterion":
        given = [name for name in DECISIONS if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                f"give exactly one of {', '.join(DECISIONS)}; got {', '.join(given) if given else 'none'}"
            )
        if self.between is not None and self.between[0] > self.between[1]:
            raise ValueError(f"between = [low, high] needs low <= high, got {list(self.between)}")
        return self

    @property
    def decision(self) -> str:
        return next(name for name in DECISIONS if getattr(self, name) is not None)

    @property
    def needs_baseline(self) -> bool:
        return self.not_worse_than_baseline_by is not None

    def level_words(self) -> str:
        return "the point estimate" if self.confidence == "point" else f"{_percent(float(self.confidence))} confidence"


def _percent(level: float) -> str:
    return f"{100 * level:g}%"


class Policy(BaseModel):
    """An acceptance policy: its criteria, each decided on its own."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="The policy's name (a Gherkin Feature's title, or the TOML file's `name`).")
    source: str | None = Field(default=None, description="The file the policy was read from.")
    criteria: list[Criterion] = Field(min_length=1, description="The criteria, in the order they are decided and shown.")

    @model_validator(mode="after")
    def _unique_names(self) -> "Policy":
        twice = [name for name, count in Counter(c.name for c in self.criteria).items() if count > 1]
        if twice:
            raise ValueError(f"criterion names must be unique (each is one JUnit testcase); given twice: {', '.join(twice)}")
        return self

    def benchmarks(self) -> list[str]:
        return list(dict.fromkeys(c.benchmark for c in self.criteria))
