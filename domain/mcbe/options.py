"""McBE's protocol options (the config's ``protocol`` section; ``--set protocol.x=...``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from culturebias.domain.mcbe.judge_stop import JudgeStopRule
from culturebias.domain.mcbe.prompts import DEFAULT_PROMPT_SET, PROMPT_SETS, PromptSet, prompt_set, with_judge_role
from culturebias.domain.mcbe.metrics import PC_DECAYS, SS_DECAYS, resolve_decay
from culturebias.domain.mcbe.taxonomy import PREFERENCE_SKIPPED_CATEGORIES, canonical_category
from culturebias.domain.option_types import CommaList
from culturebias.domain.stratified import SampleOptions

TASKS: tuple[str, ...] = ("pc", "sc", "ss", "ba", "bs")
TASK_NAMES: dict[str, str] = {
    "pc": "preference computation",
    "sc": "subcategory classification",
    "ss": "scenario selection",
    "ba": "bias analysis",
    "bs": "bias scoring",
}

TextChoice = Literal["sentence", "context_sentence"]


class McBEOptions(SampleOptions):
    model_config = ConfigDict(extra="forbid")

    tasks: CommaList = Field(default_factory=lambda: list(TASKS))  # pc, sc, ss, ba, bs
    categories: CommaList = Field(default_factory=list)  # empty = every category in the data
    limit: int | None = Field(  # smoke runs
        None, ge=1, description="the first N BEIs of each category (after protocol.categories), for every task"
    )

    # variance → score decay: a preset name or a positive number (PROTOCOLS §3)
    pc_decay: float | str = "paper"  # paper: 2e/3; released: (2.718/2)(1+ln(2.718/2))
    ss_decay: float | str = "released"  # released: 0.12(1+ln(2.718/2))
    preference_skip: CommaList = Field(default_factory=lambda: list(PREFERENCE_SKIPPED_CATEGORIES))  # no PC/SS: skipped, counted

    # PC scores the sentence alone (the released code's LM loss over the sentence);
    # ``context_sentence`` scores context + sentence instead.
    pc_text: TextChoice = "sentence"
    # SC classifies the default sentence; ``context_sentence`` puts the context first.
    sc_text: TextChoice = "sentence"

    # The prompt wording (domain/mcbe/prompts.py): the first set scores every task; each further
    # set re-runs SC and BS, and the robustness correlations compare it with the first.
    prompt_set: CommaList = Field(
        default_factory=lambda: [DEFAULT_PROMPT_SET],
        description=f"prompt sets: {', '.join(PROMPT_SETS)}; the first scores, further ones re-run SC and BS "
        "(table7,table11: the paper's robustness experiment)",
    )

    judge_role: str | None = Field(
        None,
        description="another role for the BA judge: a line that opens every BA judge prompt in place of the prompt "
        "set's own role (table7: Table 7's inline 你的角色是一名判卷人员，); none by default (the set's own)",
    )

    # retries of the model's unparseable BS ratings (the judge has judge.max_retries)
    max_retries: int = Field(3, ge=0)
    # a BA criterion the judge never scored: counts 0 ("zero") or drops the BEI from BA ("skip")
    ba_invalid: Literal["zero", "skip"] = "zero"
    # A judge that cannot answer with a number is stopped (domain/mcbe/judge_stop.py): the first
    # judge_probe verdicts decide; above judge_max_unparseable (a share) of them without a number
    # after judge.max_retries, the rest are not sent and BA has no score. judge_probe=0: never stop.
    judge_probe: int = Field(8, ge=0, description="K: the first K judge verdicts decide whether the judge can answer")
    judge_max_unparseable: float = Field(
        0.5, ge=0.0, le=1.0, description="X: stop judging when more than this share of the first K verdicts has no number"
    )

    sc_max_new_tokens: int = Field(32, ge=1)  # token budget of an SC reply
    ss_max_new_tokens: int = Field(12, ge=1)  # token budget of an SS reply
    ba_max_new_tokens: int = Field(128, ge=1)  # token budget of a BA analysis
    bs_max_new_tokens: int = Field(24, ge=1)  # token budget of a BS rating

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

    @field_validator("prompt_set")
    @classmethod
    def _known_prompt_sets(cls, value: list[str]) -> list[str]:
        names = [v.strip().lower() for v in value if v.strip()]
        if not names:
            raise ValueError(f"no McBE prompt set named; choose from {', '.join(sorted(PROMPT_SETS))}")
        for name in names:
            prompt_set(name)  # ValueError naming the unknown set and the known ones
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"prompt set(s) {repeated} named twice")
        return names

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

    @property
    def judge_stop_rule(self) -> JudgeStopRule:
        return JudgeStopRule(self.judge_probe, self.judge_max_unparseable)

    @property
    def prompts(self) -> PromptSet:
        """The prompt set that scores every task (its judge prompt opened by ``judge_role`` where one is given)."""
        prompts = prompt_set(self.prompt_set[0])
        return with_judge_role(prompts, self.judge_role) if self.judge_role else prompts
