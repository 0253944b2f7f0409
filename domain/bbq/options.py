"""KoBBQ and CBBQ protocol options (``--set protocol.<name>=<value>``; values arrive as strings).

``mode``: ``generate`` (the model writes an answer, mapped to an option or
counted out-of-choice), ``likelihood`` (the option letters are scored as
continuations of the prompt and the likeliest is the answer), or ``auto``
(the default, PROTOCOLS §2): generate for a model with a chat template
(instruction-tuned; both papers generated) and likelihood for a base model;
where the backend lacks the capability the other mode is used, and a masked
LM (``model.kind=masked``) answers in ``masked`` mode: each option's text is
scored by pseudo-log-likelihood after the context and question, per token,
and the likeliest option is the answer (``application/bbq/mode.py``). The summary's ``metrics.answering`` and the
report say which mode ran and why; a likelihood run says the papers generated.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from culturebias.domain.cbbq.prompts import CONDITIONS
from culturebias.domain.bbq.answer_order import PermutationScheme
from culturebias.domain.option_types import CommaIntList, CommaList, nonempty_subset
from culturebias.domain.stratified import SampleOptions

# masked: an encoder (masked LM, model.kind=masked) scores each option by pseudo-log-likelihood (CBBQ §5.8)
Mode = Literal["auto", "generate", "likelihood", "masked"]
AnswerMode = Literal["generate", "likelihood", "masked"]  # what ``auto`` resolves to before a run
# KoBBQ, within a prompt: pooled (every answer counts once) or per_template (mean of per-template scores).
KoBBQAggregate = Literal["pooled", "per_template"]
# CBBQ's overall score: pooled (all items together) or category_mean (the mean of the category scores).
CBBQOverall = Literal["pooled", "category_mean"]
ReasoningDecoding = Literal["sampled", "greedy"]


def _strings(value: object) -> object:
    if isinstance(value, (int, float)):
        value = [value]
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value]
    return value


class BBQOptions(SampleOptions):
    model_config = ConfigDict(extra="forbid")

    mode: Mode = "auto"
    permutation_scheme: PermutationScheme = "cyclic"
    categories: CommaList | None = None  # None = every category in the data
    # Quick runs: the first N items (after the category filter); each subclass says of what.
    limit: int | None = Field(None, ge=1)
    max_new_tokens: int = Field(32, ge=1)  # generate mode: the answer turn
    keep_predictions: bool = True  # every answer, one compact line each, in summary.json details

    @field_validator("permutations", mode="after", check_fields=False)
    @classmethod
    def _valid_permutations(cls, value: list[int]) -> list[int]:
        if not value or any(p not in (0, 1, 2) for p in value):
            raise ValueError(f"permutations must be a non-empty subset of 0,1,2, got {value}")
        return sorted(set(value))

    @field_validator("categories", mode="before")
    @classmethod
    def _category_strings(cls, value: object) -> object:
        return _strings(value)


class KoBBQOptions(BBQOptions):
    limit: int | None = Field(
        None,
        ge=1,
        description="the first N items of the samples file (after protocol.categories), "
        "each asked with every prompt and option order",
    )
    prompts: CommaList | None = None  # prompt ids; None = every prompt of the prompts file (1–5)
    permutations: CommaIntList = Field(default_factory=lambda: [0, 1, 2])
    # pooled: every answer of a prompt counts once (the test set: one sample per
    # template); per_template: the mean of per-template scores ("all-samples").
    aggregate: KoBBQAggregate = "pooled"
    std_ddof: int = Field(1, ge=0)  # std over prompts
    # One-way ANOVA and Tukey HSD of per-template diff-bias across categories
    # (Tukey's p-values take a few seconds for twelve categories).
    statistics: bool = True

    @field_validator("prompts", mode="before")
    @classmethod
    def _prompt_strings(cls, value: object) -> object:
        return _strings(value)

    @field_validator("prompts")
    @classmethod
    def _some_prompts(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            raise ValueError("prompts must name at least one prompt id")
        return None if value is None else list(dict.fromkeys(value))


class CBBQOptions(BBQOptions):
    limit: int | None = Field(
        None,
        ge=1,
        description="the first N items of each category's ambiguous file and of its disambiguated file "
        "(after protocol.categories)",
    )
    condition: CommaList = Field(default_factory=lambda: ["q"])
    permutations: CommaIntList = Field(default_factory=lambda: [0])
    w1: float = Field(0.4, ge=0.0)
    w2: float = Field(0.6, ge=0.0)
    # pooled: all items together; category_mean: the mean of the category scores.
    overall: CBBQOverall = "pooled"
    reasoning_max_new_tokens: int = Field(256, ge=1)  # Q+IF+CoT: the reasoning turn
    # Q+IF+CoT's reasoning turn: sampled as in the paper (model.sampling's values where it samples,
    # else the model's own), or greedy. The answer turn decodes as model.sampling says (greedy by default).
    reasoning_decoding: ReasoningDecoding = "sampled"

    @field_validator("condition", mode="before")
    @classmethod
    def _condition_strings(cls, value: object) -> object:
        return _strings(value)

    @field_validator("condition")
    @classmethod
    def _known_conditions(cls, value: list[str]) -> list[str]:
        return nonempty_subset("condition", value, CONDITIONS)

    @model_validator(mode="after")
    def _weights(self) -> "CBBQOptions":
        if self.w1 + self.w2 <= 0:
            raise ValueError("w1 + w2 must be positive")
        return self
