"""TWBias protocol options (``--set protocol.<name>=<value>``; values arrive as strings)."""

from __future__ import annotations

from dataclasses import fields
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from culturebias.domain.stratified import SampleOptions
from culturebias.domain.option_types import CommaList, nonempty_subset
from culturebias.domain.twbias.evaluation import AnalysisOptions
from culturebias.domain.twbias.model import PROMPT_TYPES

AXES = ("gender", "ethnicity")


def _as_strings(value: object) -> object:
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value]
    return value


class TWBiasOptions(SampleOptions):
    model_config = ConfigDict(extra="forbid")

    groups: CommaList = Field(default_factory=lambda: list(AXES))  # gender, ethnicity
    prompt_types: CommaList = Field(default_factory=lambda: list(PROMPT_TYPES))  # 0, 00, 1-10 (PROTOCOLS §1.2)
    # PROTOCOLS §1.5: the released code's paired test is the default; the paper's text names Student's.
    test: Literal["paired", "welch", "student"] = "paired"
    # The authors' sign (t of ttest_rel(origin_ppl, replace_ppl)); replace_minus_origin = summaries before wave 3.
    t_sign: Literal["origin_minus_replace", "replace_minus_origin"] = "origin_minus_replace"
    # PROTOCOLS §1.3: a sentence's replace PPL over its replaced sentences; min = one released cal_bias.py.
    replace_aggregate: Literal["mean", "min"] = "mean"
    effect: Literal["d", "dz"] = "dz"  # dz: the paired Cohen's d_z (Table 4); d: the pooled Cohen's d
    alpha: float = Field(0.05, gt=0.0, lt=1.0)  # the t-test's significance level
    outlier_sigma: float = Field(3.0, gt=0.0)  # pairs with a PPL outside mean ± this · std are outliers, left out
    min_pairs: int | None = Field(
        None,
        ge=2,
        description=(
            "the opt-in stricter rule: the fewest sentence pairs (after outliers) a prompt type's t-test needs; with "
            "fewer it is 'too few to test': t, p and effect sizes null, never significant, out of the bias ratio. "
            "None (default): tested whenever the test is defined (2 pairs), as the authors' code; a test on fewer "
            "than 10 pairs is flagged 'few pairs: n = 3, low power' (10 gives the rule before the flag)"
        ),
    )
    # First N sentences of every origin group's file (quick checks); None = all.
    limit: int | None = Field(None, ge=1, description="the first N sentences of each origin group's file")
    # How a sentence counts in the attribute-category breakdown (PROTOCOLS §1.7): exploded = once per T-A pair
    # in every category of its attributes, as the authors' code duplicates the row per attribute (the default);
    # unique = once in each of its categories, however many of its pairs fall there.
    category_rows: Literal["unique", "exploded"] = "exploded"
    # A sentence row repeating an earlier row's sentence (another Sentence ID): warn = keep it, count and
    # report it (each row is evaluated, as in the authors' code); refuse = stop with a data error naming it.
    duplicate_sentences: Literal["warn", "refuse"] = "warn"

    @field_validator("groups", "prompt_types", mode="before")
    @classmethod
    def _stringify(cls, value: object) -> object:
        if isinstance(value, (int, float)):
            value = [value]
        return _as_strings(value)

    @field_validator("groups")
    @classmethod
    def _known_groups(cls, value: list[str]) -> list[str]:
        return nonempty_subset("groups", value, AXES)

    @field_validator("prompt_types")
    @classmethod
    def _known_prompt_types(cls, value: list[str]) -> list[str]:
        chosen = nonempty_subset("prompt_types", value, PROMPT_TYPES)
        return [t for t in PROMPT_TYPES if t in chosen]  # report order, whatever order they were given in

    def analysis(self) -> AnalysisOptions:
        return AnalysisOptions(**self.model_dump(include={f.name for f in fields(AnalysisOptions)}))
