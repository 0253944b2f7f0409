"""McBE's protocol options (the config's ``protocol`` section; ``--set protocol.x=...``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from culturebias.domain.mcbe.metrics import PC_DECAYS, SS_DECAYS, resolve_decay
from culturebias.domain.mcbe.taxonomy import PREFERENCE_SKIPPED_CATEGORIES, canonical_category
from culturebias.domain.option_types import CommaList

TASKS: tuple[str, ...] = ("pc", "sc", "ss", "ba", "bs")
TASK_NAMES: dict[str, str] = {
    "pc": "preference computation",
    "sc": "subcategory classification",
    "ss": "scenario selection",
    "ba": "bias analysis",
    "bs": "bias scoring",
}

TextChoice = Literal["sentence", "context_sentence"]


class McBEOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tasks: CommaList = Field(default_factory=lambda: list(TASKS))
    categories: CommaList = Field(default_factory=list)  # empty = every category in the data
    limit: int | None = Field(  # smoke runs
        None, ge=1, description="the first N BEIs of each category (after protocol.categories), for every task"
    )

    # variance → score decay: a preset name or a positive number (PROTOCOLS §3)
    pc_decay: float | str = "paper"  # paper: 2e/3; released: (2.718/2)(1+ln(2.718/2))
    ss_decay: float | str = "released"  # released: 0.12(1+ln(2.718/2))
    preference_skip: CommaList = Field(default_factory=lambda: list(PREFERENCE_SKIPPED_CATEGORIES))

    # PC scores the sentence alone (the released code's LM loss over the sentence);
    # ``context_sentence`` scores context + sentence instead.
    pc_text: TextChoice = "sentence"
    # SC classifies the default sentence; ``context_sentence`` puts the context first.
    sc_text: TextChoice = "sentence"

    # retries of the model's unparseable BS ratings (the judge has judge.max_retries)
    max_retries: int = Field(3, ge=0)
    # a BA criterion the judge never scored: counts 0 ("zero") or drops the BEI from BA ("skip")
    ba_invalid: Literal["zero", "skip"] = "zero"

    sc_max_new_tokens: int = Field(32, ge=1)
    ss_max_new_tokens: int = Field(12, ge=1)
    ba_max_new_tokens: int = Field(128, ge=1)
    bs_max_new_tokens: int = Field(24, ge=1)

    @field_validator("tasks")
    @classmethod
    def _known_tasks(cls, value: list[str]) -> list[str]:
        tasks = [t.lower() for t in value]
        unknown = [t for t in tasks if t not in TASKS]
        if unknown:
            raise ValueError(f"unknown McBE tasks {unknown}; choose from {list(TASKS)}")
        if not tasks:
            raise ValueError("no McBE task selected")
        return [t for t in TASKS if t in tasks]  # canonical order, no repeats

    @field_validator("categories", "preference_skip")
    @classmethod
    def _canonical(cls, value: list[str]) -> list[str]:
        return [canonical_category(v) for v in value]

    @field_validator("pc_decay")
    @classmethod
    def _pc_decay(cls, value: float | str) -> float | str:
        resolve_decay(value, PC_DECAYS)
        return value

    @field_validator("ss_decay")
    @classmethod
    def _ss_decay(cls, value: float | str) -> float | str:
        resolve_decay(value, SS_DECAYS)
        return value

    @property
    def pc_rate(self) -> float:
        return resolve_decay(self.pc_decay, PC_DECAYS)

    @property
    def ss_rate(self) -> float:
        return resolve_decay(self.ss_decay, SS_DECAYS)
