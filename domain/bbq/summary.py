"""The typed summary.json of KoBBQ and CBBQ runs (field names and order are summary.json's keys).

Shared by both: the answer tallies a score is computed from, the skipped
rows and the answering setup. Every ratio is a ``Number``: an undefined one
(empty denominator) is null.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from culturebias.domain.bbq.answer_order import PermutationScheme
from culturebias.domain.cbbq.prompts import Condition
from culturebias.domain.bbq.options import AnswerMode, CBBQOverall, KoBBQAggregate
from culturebias.domain.bbq.fidelity_summary import (
    AnovaBlock,
    AnsweringBlock,
    KoBBQRunTests,
    ReasoningBlock,
)
from culturebias.domain.skips import SkippedRow
from culturebias.domain.summary import Block, Count, Number, OmittedWhenNone, RunSummary
from culturebias.domain.uncertainty.interval import Interval


def answers_unreadable(answers: int, out_of_choice: int, invalid_replies: int) -> str | None:
    """Why no KoBBQ/CBBQ score can be read from a run's answers: none, or every one out of choice (None: some count)."""
    if answers == 0:
        return "no answer was scored"
    if out_of_choice < answers:
        return None
    lost = f", {invalid_replies} of them replies the backend got no valid text for" if invalid_replies else ""
    return (
        f"every answer was out of choice ({out_of_choice} of {answers}{lost}): the model never named an option, "
        "so accuracy and bias are undefined"
    )


# -- KoBBQ ------------------------------------------------------------------------
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


class PromptStats(Block):
    """One metric over prompts: mean and std of the defined per-prompt values, and each prompt's value."""

    mean: Number
    std: Number
    n_prompts: Count
    per_prompt: dict[str, Number]


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

    def headline_unreadable(self) -> str | None:
        return answers_unreadable(self.counts.answers, self.counts.out_of_choice, self.counts.invalid_replies)


# -- CBBQ -------------------------------------------------------------------------
class CBBQAnswerCounts(Block):
    n_total: Count = 0
    n_ooc: Count = 0
    n_amb: Count = 0
    n_amb_biased: Count = 0
    n_amb_counter_biased: Count = 0
    n_amb_unknown: Count = 0
    n_dis: Count = 0
    n_dis_biased: Count = 0
    n_dis_counter_biased: Count = 0
    n_dis_unknown: Count = 0
    n_dis_correct: Count = 0
    n_dis_non_unknown: Count = 0  # n_dis - n_dis_unknown: the S_dis denominator
    # Ambiguous items without a derivable biased answer: answered (not out-of-choice), and of those
    # answered "unknown" (correct). They count in acc_amb alone; n_amb (the S_amb denominator) leaves them out.
    n_amb_unresolved: Count = 0
    n_amb_unresolved_unknown: Count = 0


class CBBQScores(Block):
    s_amb: Number
    s_dis: Number
    s_total: Number
    acc_amb: Number
    acc_dis: Number
    ooc_ratio: Number
    counts: CBBQAnswerCounts
    # 95% bootstrap intervals of s_amb, s_dis, s_total (domain/bbq/intervals.py)
    intervals: dict[str, Interval] | None = None


class GroupTopicScores(Block):
    """CBBQ scores of one targeted group × stereotype topic (``bias_targeted_groups`` × ``subcategory``; paper Fig. 6)."""

    category: str
    targeted_group: str
    topic: str
    scores: CBBQScores


class CBBQConditionBlock(Block):
    overall: CBBQScores
    by_category: dict[str, CBBQScores]
    # targeted group × stereotype topic (paper Fig. 6); None in summaries written before it existed
    by_group_topic: list[GroupTopicScores] | None = None


class Weights(Block):
    w1: float
    w2: float
    source: str | None = None  # where the values come from (the paper states only w2 > w1)


class CBBQMetrics(Block):
    mode: AnswerMode
    chat_template: bool
    permutations: list[int]
    permutation_scheme: PermutationScheme
    condition: Condition  # the headline condition: the first of ``conditions``
    condition_name: str
    conditions: list[Condition]
    weights: Weights
    overall_aggregate: CBBQOverall
    overall: CBBQScores
    by_category: dict[str, CBBQScores]
    by_condition: dict[str, CBBQConditionBlock]
    answering: AnsweringBlock | None = None  # the mode asked for, the one that ran, and why
    reasoning: ReasoningBlock | None = None  # Q+IF+CoT only: how the reasoning turn was decoded


class BiasedAnswerDerivation(Block):
    """How many items of the data had their biased answer derived each way."""

    label: Count
    twin: Count
    groups: Count
    unresolved: Count


class CBBQCounts(Block):
    items_in_data: Count
    items_skipped: Count
    items: Count
    ambiguous_items: Count
    disambiguated_items: Count
    biased_answer_unresolved: Count
    biased_answer_unresolved_in_data: Count
    biased_answer_derivation: BiasedAnswerDerivation | None  # None: the loader did not report it
    answers: Count
    out_of_choice: Count
    out_of_choice_by_condition: dict[str, Count]
    # replies the backend got no valid text for after its retries; they are among out_of_choice
    invalid_replies: Count = 0


class CBBQDetails(OmittedWhenNone):
    omitted_when_none: ClassVar[tuple[str, ...]] = ("predictions",)

    skips: list[SkippedRow]
    categories: list[str]
    biased_answer_unresolved_ids: list[str]
    predictions: list[str] | None = None


class CBBQSummary(RunSummary):
    benchmark: Literal["cbbq"]
    metrics: CBBQMetrics
    counts: CBBQCounts
    details: CBBQDetails

    def headline_unreadable(self) -> str | None:
        return answers_unreadable(self.counts.answers, self.counts.out_of_choice, self.counts.invalid_replies)
