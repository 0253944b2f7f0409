"""What a sequential check (``check --sequential``) records: its rounds and decisions (summary.json, the verdict)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


# domain/uncertainty/confidence_sequence.py computes it
METHOD = "hedged betting confidence sequence (Waudby-Smith & Ramdas, JRSS-B 2024)"
MIN_UNITS = 20  # no decision rests on fewer units than this, whatever the sequence says


class SequentialRound(BaseModel):
    """One round of a sequential check."""

    model_config = ConfigDict(extra="forbid")

    round: int = Field(description="1, 2, ...")
    benchmark: str = Field(description="the benchmark the round ran")
    requested: int = Field(description="the round's --sample N (items)")
    items: int = Field(description="items the round's nested stratified sample holds (every earlier round's included)")
    units: int = Field(description="resampling units (KoBBQ templates) the round holds")
    answers: int = Field(description="answers (item records) of the round's run, every earlier round's included")
    run_id: str = Field(description="the round's run")
    where: str = Field(description="the round's run folder")
    decided: list[str] = Field(default_factory=list, description="criteria decided after this round")


class SequentialCriterion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="the criterion")
    outcome: str = Field(description="pass, fail or inconclusive")
    decided_in_round: int | None = Field(default=None, description="the round it was decided in; null: never")
    low: float | None = Field(default=None, description="the confidence sequence's lower end when it was decided (or at the end)")
    high: float | None = Field(default=None, description="its upper end")
    estimate: float | None = Field(default=None, description="the weighted mean of the per-unit values then")
    units: int = Field(default=0, description="units in the stream then")


class SequentialBlock(BaseModel):
    """How a sequential check went: summary.json's and the verdict's ``sequential`` block."""

    model_config = ConfigDict(extra="forbid")

    method: str = Field(default=METHOD, description="the confidence sequence the criteria were decided on")
    alpha: dict[str, float] = Field(default_factory=dict, description="criterion -> 1 - its confidence level")
    min_units: int = Field(default=MIN_UNITS, description="no decision before this many units")
    seed: int = Field(default=0, description="the seed of the nested stratified samples")
    rounds: list[SequentialRound] = Field(default_factory=list, description="every round run, in order")
    criteria: list[SequentialCriterion] = Field(default_factory=list, description="each criterion's sequential decision")
    stopped_early: bool = Field(default=False, description="every criterion was decided before the data ran out")
    items_used: int = Field(default=0, description="items the last round holds")
    items_in_data: int = Field(default=0, description="items of the whole data (what the full run evaluates)")
    answers_used: int = Field(default=0, description="answers the last round's run holds")
    answers_full_run: int | None = Field(default=None, description="answers of the full run (known when the data ran out, else estimated: answers_used x items_in_data / items_used)")
