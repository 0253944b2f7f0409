"""The typed summary.json of a KoBBQ run (field names and order are summary.json's keys).

Every ratio is a ``Number``: an undefined one (empty denominator) is null.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from culturebias.domain.bbq.answer_order import PermutationScheme
from culturebias.domain.bbq.fidelity_summary import AnovaBlock, AnsweringBlock, KoBBQRunTests
from culturebias.domain.bbq.evaluators import KoBBQEvaluator
from culturebias.domain.bbq.options import AnswerMode
from culturebias.domain.bbq.summary import PromptStats
from culturebias.domain.kobbq.options import KoBBQAggregate
from culturebias.domain.skips import SkippedRow
from culturebias.domain.summary import Block, Count, Number, OmittedWhenNone, RunSummary
from culturebias.domain.uncertainty.interval import Interval


class KoBBQAnswerCounts(Block):
    """``n_xy``: context type x (a ambiguous, b biased-, c counter-biased-disambiguated) answered y."""

    n_total: Count = 0
    n_ooc: Count = 0
    n_a: Count = 0
    n_au: Count = 0
    n_ab: Count = 0
    n_ac: Count = 0
    n_b: Count = 0
    n_bb: Count = 0
    n_bc: Count = 0
    n_bu: Count = 0
    n_c: Count = 0
    n_cb: Count = 0
    n_cc: Count = 0
    n_cu: Count = 0
    # disambiguated version-d items (within n_b) and their correct answers (within n_bb): what
    # KoBBQ_evaluation.py counts on the counter-biased side (domain/bbq/evaluators.py)
    n_version_d: Count = 0
    n_version_d_correct: Count = 0


class DiffBiasBounds(Block):
    diff_bias_amb_bound: Number
    diff_bias_dis_bound: Number
    diff_bias_amb_within_bound: bool | None
    diff_bias_dis_within_bound: bool | None


class KoBBQScoreBlock(Block):
    """Every KoBBQ metric of a set of answers (all, one label, one category), per prompt and over prompts."""

    acc_amb: PromptStats
    acc_dis: PromptStats
    diff_bias_amb: PromptStats
    diff_bias_dis: PromptStats
    ooc_ratio: PromptStats
    bounds: dict[str, DiffBiasBounds]
    counts: dict[str, KoBBQAnswerCounts]
    # 95% bootstrap intervals of the headline means over prompts, by metric (domain/bbq/intervals.py)
    intervals: dict[str, Interval] | None = None
    # KoBBQ_evaluation.py's extra metrics, under either evaluator (domain/bbq/evaluators.py);
    # None in summaries written before them
    acc_overall: PromptStats | None = None
    bias_score_amb: PromptStats | None = None
    bias_score_dis: PromptStats | None = None
    inconsistency: PromptStats | None = None


class TemplateScores(Block):
    """One template's scores, mean over prompts."""

    acc_amb: Number
    acc_dis: Number
    diff_bias_amb: Number
    diff_bias_dis: Number
    ooc_ratio: Number
    # The template's label type (KoBBQ: ST, TM, NC...); None where its samples disagree or have none.
    label: str | None = None


class TukeyPairBlock(Block):
    a: str
    b: str
    mean_difference: Number
    p_value: Number
    ci_low: Number
    ci_high: Number


class CategoryTest(Block):
    """One-way ANOVA and Tukey HSD of one metric's per-template scores across categories (None: too few)."""

    sample: str
    anova: AnovaBlock | None
    tukey_hsd: list[TukeyPairBlock] | None


class KoBBQMetrics(Block):
    mode: AnswerMode
    chat_template: bool
    permutations: list[int]
    permutation_scheme: PermutationScheme
    prompts: list[str]
    unknown_wording: dict[str, str]
    aggregate: KoBBQAggregate
    std_ddof: int
    overall: KoBBQScoreBlock
    by_label: dict[str, KoBBQScoreBlock]
    by_category: dict[str, KoBBQScoreBlock]
    statistics: dict[str, CategoryTest]  # by tested metric; empty with protocol.statistics=false
    answering: AnsweringBlock | None = None  # the mode asked for, the one that ran, and why
    # The paper's tests in this run: Tukey HSD 99% on normalised diff-bias (Figs. 3–4), rank-sum (Table 4)
    tests: KoBBQRunTests | None = None
    # The authors' evaluator whose DiffBias_d ran (domain/bbq/evaluators.py); older summaries ran 5_evaluation
    evaluator: KoBBQEvaluator = "5_evaluation"


class KoBBQCounts(Block):
    items_in_data: Count
    items_skipped: Count
    items: Count
    answers: Count
    out_of_choice: Count
    out_of_choice_by_prompt: dict[str, Count]
    # replies the backend got no valid text for after its retries; they are among out_of_choice
    invalid_replies: Count = 0


class KoBBQDetails(OmittedWhenNone):
    omitted_when_none: ClassVar[tuple[str, ...]] = ("samples_file", "prompts_file", "predictions")

    skips: list[SkippedRow]
    template_scores: dict[str, TemplateScores]
    samples_file: str | None = None
    prompts_file: str | None = None
    # ``sample_id|prompt|permutation|chosen option index or -|answer class``, one per answer (protocol.keep_predictions)
    predictions: list[str] | None = None


class KoBBQSummary(RunSummary):
    benchmark: Literal["kobbq"]
    metrics: KoBBQMetrics
    counts: KoBBQCounts
    details: KoBBQDetails
