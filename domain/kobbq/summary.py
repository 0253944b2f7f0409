"""The typed summary.json of a KoBBQ run (field names and order are summary.json's keys).

Every ratio is a ``Number``: an undefined one (empty denominator) is null.
"""

from __future__ import annotations

from pydantic import Field

from typing import ClassVar, Literal

from culturebias.domain.bbq.fidelity_summary import AnovaBlock, AnsweringBlock, KoBBQRunTests, TukeyPairBlock
from culturebias.domain.bbq.evaluators import KoBBQEvaluator
from culturebias.domain.bbq.summary import (
    AnswerTotals,
    AskedSetup,
    DiffBiasMetrics,
    ItemCounts,
    PromptStats,
    answers_unreadable,
)
from culturebias.domain.kobbq.options import KoBBQAggregate
from culturebias.domain.skips import SkippedRow
from culturebias.domain.summary import Block, Count, Number, OmittedWhenNone, RunSummary
from culturebias.domain.summary_fields import Intervals, bootstrap_intervals


class KoBBQAnswerCounts(AnswerTotals):
    """``n_xy``: context type x (a ambiguous, b biased-, c counter-biased-disambiguated) answered y."""

    n_a: Count = Field(0, description="answers to ambiguous contexts")
    n_au: Count = Field(0, description="ambiguous contexts answered unknown (correct)")
    n_ab: Count = Field(0, description="ambiguous contexts answered with the biased option")
    n_ac: Count = Field(0, description="ambiguous contexts answered with the counter-biased option")
    n_b: Count = Field(0, description="answers to biased disambiguated contexts")
    n_bb: Count = Field(0, description="biased disambiguated contexts answered with the biased option (correct)")
    n_bc: Count = Field(0, description="biased disambiguated contexts answered with the counter-biased option")
    n_bu: Count = Field(0, description="biased disambiguated contexts answered unknown")
    n_c: Count = Field(0, description="answers to counter-biased disambiguated contexts")
    n_cb: Count = Field(0, description="counter-biased disambiguated contexts answered with the biased option")
    n_cc: Count = Field(
        0,
        description="counter-biased disambiguated contexts answered with the counter-biased option (correct)",
    )
    n_cu: Count = Field(0, description="counter-biased disambiguated contexts answered unknown")
    n_version_d: Count = Field(
        0, description="disambiguated version-d items within n_b: what KoBBQ_evaluation.py counts on the counter-biased side"
    )
    n_version_d_correct: Count = Field(0, description="version-d items answered correctly (within n_bb)")


class DiffBiasBounds(Block):
    diff_bias_amb_bound: Number = Field(description="1 - Acc_a: how large |diff-bias| can be on ambiguous contexts")
    diff_bias_dis_bound: Number = Field(
        description="1 - |2·Acc_d - 1|: how large |diff-bias| can be on disambiguated contexts",
    )
    diff_bias_amb_within_bound: bool | None = Field(
        description="whether |DiffBias_a| ≤ its bound (a check of the computation); null where undefined",
    )
    diff_bias_dis_within_bound: bool | None = Field(
        description="whether |DiffBias_d| ≤ its bound; null where undefined",
    )


class KoBBQScoreBlock(DiffBiasMetrics[PromptStats]):
    """Every KoBBQ metric of a set of answers (all, one label, one category), per prompt and over prompts."""

    ooc_ratio: PromptStats = Field(description="share of answers out of choice")
    bounds: dict[str, DiffBiasBounds] = Field(description="prompt id → the diff-bias bounds")
    counts: dict[str, KoBBQAnswerCounts] = Field(
        description="prompt id → the answer tallies the metrics are computed from",
    )
    intervals: Intervals | None = bootstrap_intervals(
        "(over templates) of the headline means, by metric", "a label type's or category's block resamples its own templates"
    )
    acc_overall: PromptStats | None = Field(
        None, description="KoBBQ_evaluation.py's overall accuracy (correct / answered); null in older summaries"
    )
    bias_score_amb: PromptStats | None = Field(None, description="the BBQ paper's ambiguous bias score S_AMB")
    bias_score_dis: PromptStats | None = Field(None, description="the BBQ paper's disambiguated bias score S_DIS")
    inconsistency: PromptStats | None = Field(
        None, description="mean number of distinct answers per question over its option orders (1 = consistent)"
    )


class TemplateScores(DiffBiasMetrics[Number]):
    """One template's scores, mean over prompts."""

    ooc_ratio: Number = Field(description="the template's out-of-choice ratio, mean over prompts")
    label: str | None = Field(
        None,
        description="the template's label type (ST, TM, NC, ...); null where its samples disagree or have none",
    )


class CategoryTest(Block):
    """One-way ANOVA and Tukey HSD of one metric's per-template scores across categories (None: too few)."""

    sample: str = Field(description="what one value is (a template's score, mean over prompts, grouped by category)")
    anova: AnovaBlock | None = Field(
        description="one-way ANOVA across categories; null with fewer than two usable groups",
    )
    tukey_hsd: list[TukeyPairBlock] | None = Field(
        description="Tukey's HSD for every two categories; null with fewer than two usable groups",
    )


class KoBBQMetrics(AskedSetup):
    """How the answers were asked (the inherited head), then every KoBBQ metric and test of the run."""

    prompts: list[str] = Field(description="the evaluation prompts asked (1-5)")
    unknown_wording: dict[str, str] = Field(description="prompt id → its wording of the unknown option")
    aggregate: KoBBQAggregate = Field(
        description=(
            "pooled (answers pooled per prompt) or per_template (the paper's all-samples mode: per-template scores "
            "averaged)"
        ),
    )
    std_ddof: int = Field(description="the ddof of the standard deviations over prompts")
    overall: KoBBQScoreBlock = Field(description="every metric over all answers")
    by_label: dict[str, KoBBQScoreBlock] = Field(description="the same per label type (ST, TM, NC, ...)")
    by_category: dict[str, KoBBQScoreBlock] = Field(description="the same per category")
    statistics: dict[str, CategoryTest] = Field(
        description="by tested metric: ANOVA and Tukey HSD across categories; empty with protocol.statistics=false",
    )
    answering: AnsweringBlock | None = Field(None, description="the mode asked for, the one that ran, and why")
    tests: KoBBQRunTests | None = Field(
        None,
        description=(
            "the paper's tests in this run: Tukey HSD at 99% on normalised diff-bias (Figs. 3-4), rank-sum against "
            "a reference (Table 4)"
        ),
    )
    evaluator: KoBBQEvaluator = Field(
        "5_evaluation", description="the authors' evaluator whose DiffBias_d ran (domain/bbq/evaluators.py)"
    )


class KoBBQCounts(ItemCounts):
    """Items (the inherited head), answers and out-of-choice answers."""

    answers: Count = Field(description="answers (items × prompts × option orders)")
    out_of_choice: Count = Field(description="answers that named no option")
    out_of_choice_by_prompt: dict[str, Count] = Field(description="prompt id → out-of-choice answers")
    invalid_replies: Count = Field(
        0,
        description="replies the backend got no valid text for after its retries; they are among out_of_choice",
    )


class KoBBQDetails(OmittedWhenNone):
    omitted_when_none: ClassVar[tuple[str, ...]] = ("samples_file", "prompts_file", "predictions")

    skips: list[SkippedRow] = Field(description="every item skipped, with file, row and reason")
    template_scores: dict[str, TemplateScores] = Field(
        description="template id → its scores, mean over prompts (the sample of the tests and comparisons)",
    )
    samples_file: str | None = Field(None, description="the samples file read")
    prompts_file: str | None = Field(None, description="the evaluation prompts file read")
    predictions: list[str] | None = Field(
        None,
        description=(
            'with protocol.keep_predictions: "sample_id|prompt|permutation|chosen option index or -|answer class", '
            "one per answer"
        ),
    )


class KoBBQSummary(RunSummary):
    benchmark: Literal["kobbq"] = Field(description='always "kobbq"')
    metrics: KoBBQMetrics = Field(
        description=(
            "accuracy and diff-bias per prompt and over prompts, overall, per label type and category (PROTOCOLS "
            "§2)"
        ),
    )
    counts: KoBBQCounts = Field(description="items, answers and out-of-choice answers")
    details: KoBBQDetails = Field(
        description="skipped items, per-template scores, the files read, optionally every prediction",
    )

    def headline_unreadable(self) -> str | None:
        return answers_unreadable(self.counts.answers, self.counts.out_of_choice, self.counts.invalid_replies)
