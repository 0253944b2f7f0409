"""CBBQ's protocol options (``--set protocol.<name>=<value>``) on top of the shared BBQ ones (domain/bbq/options.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from culturebias.domain.bbq.options import BBQOptions, item_limit
from culturebias.domain.cbbq.prompts import CONDITIONS
from culturebias.domain.cbbq.released_prompt import PromptSet, released_conditions
from culturebias.domain.option_types import CommaIntList, CommaList, nonempty_subset

# The overall score: pooled (all items together) or category_mean (the mean of the category scores).
CBBQOverall = Literal["pooled", "category_mean"]
ReasoningDecoding = Literal["sampled", "greedy"]


class CBBQOptions(BBQOptions):
    limit: int | None = item_limit("each category's ambiguous file and of its disambiguated file (after protocol.categories)")
    # q, q_if, q_if_cot, q_explain (answer plus explanation, paper §5.7); the first listed is the headline
    condition: CommaList = Field(default_factory=lambda: ["q"])
    # culturebias: the project's task and answer lines; released: the authors' released Chinese prompt (Q, Q+IF)
    prompt_set: PromptSet = "culturebias"
    permutations: CommaIntList = Field(default_factory=lambda: [0])  # the option orders each item is asked in
    w1: float = Field(0.4, ge=0.0)  # S_total = w1·S_amb + w2·S_dis (the paper says only w2 > w1)
    w2: float = Field(0.6, ge=0.0)  # the weight of S_dis in S_total
    # category_mean: the mean of the category scores, each category weighing the same (paper Fig. 7, the
    # default); pooled: all items together.
    overall: CBBQOverall = "category_mean"
    reasoning_max_new_tokens: int = Field(256, ge=1)  # Q+IF+CoT: the reasoning turn
    explain_max_new_tokens: int = Field(256, ge=1)  # Q+Explain: the reply with the answer and its explanation
    # Q+IF+CoT's reasoning turn: sampled as in the paper (model.sampling's values where it samples,
    # else the model's own), or greedy. The answer turn decodes as model.sampling says (greedy by default).
    reasoning_decoding: ReasoningDecoding = "sampled"
    # The IF and CoT sentences as asked; None = culturebias's translation of the paper's English (domain/cbbq/wording.py).
    if_sentence: str | None = Field(
        None, min_length=1, description="the IF sentence as asked (default: culturebias's translation of the paper's)"
    )
    cot_sentence: str | None = Field(
        None, min_length=1, description="the CoT sentence as asked (default: culturebias's translation of the paper's)"
    )

    @field_validator("condition")
    @classmethod
    def _known_conditions(cls, value: list[str]) -> list[str]:
        return nonempty_subset("condition", value, CONDITIONS)

    @model_validator(mode="after")
    def _weights(self) -> "CBBQOptions":
        if self.w1 + self.w2 <= 0:
            raise ValueError("w1 + w2 must be positive")
        if self.prompt_set == "released":
            missing = [c for c in self.condition if c not in released_conditions()]
            if missing:
                raise ValueError(
                    f"prompt_set=released: the CBBQ authors released no prompt for {missing} "
                    f"(released: {list(released_conditions())}); use prompt_set=culturebias for those"
                )
            if self.if_sentence is not None:
                raise ValueError("prompt_set=released asks the authors' own IF sentence: drop protocol.if_sentence")
        return self
