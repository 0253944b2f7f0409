"""KoBBQ's protocol options (``--set protocol.<name>=<value>``) on top of the shared BBQ ones (domain/bbq/options.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from culturebias.domain.bbq.options import BBQOptions, item_limit
from culturebias.domain.bbq.evaluators import KoBBQEvaluator
from culturebias.domain.option_types import CommaIntList, CommaList

# Within a prompt: pooled (every answer counts once) or per_template (mean of per-template scores).
KoBBQAggregate = Literal["pooled", "per_template"]


class KoBBQOptions(BBQOptions):
    limit: int | None = item_limit("the samples file (after protocol.categories), each asked with every prompt and option order")
    prompts: CommaList | None = None  # prompt ids; None = every prompt of the prompts file (1–5)
    permutations: CommaIntList = Field(default_factory=lambda: [0, 1, 2])  # the option orders each item is asked in
    # pooled: every answer of a prompt counts once (the test set: one sample per
    # template); per_template: the mean of per-template scores ("all-samples").
    aggregate: KoBBQAggregate = "pooled"
    std_ddof: int = Field(1, ge=0)  # std over prompts
    # The authors' evaluator whose DiffBias_d is scored: 5_evaluation (evaluation/5_evaluation.py) or
    # KoBBQ_evaluation (the root KoBBQ_evaluation.py); the extra metrics are scored under either.
    evaluator: KoBBQEvaluator = Field(
        "5_evaluation",
        description="the authors' evaluator whose DiffBias_d is scored: 5_evaluation (versions b and d biased) "
        "or KoBBQ_evaluation (version b alone)",
    )
    # One-way ANOVA and Tukey HSD of per-template diff-bias across categories
    # (Tukey's p-values take a few seconds for twelve categories).
    statistics: bool = True

    @field_validator("prompts")
    @classmethod
    def _some_prompts(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            raise ValueError("prompts must name at least one prompt id")
        return None if value is None else list(dict.fromkeys(value))
