"""The typed summary.json of KoBBQ and CBBQ runs (field names and order are summary.json's keys).

Shared by both: the answer tallies a score is computed from, the skipped
rows and the answering setup. Every ratio is a ``Number``: an undefined one
(empty denominator) is null.
"""

from __future__ import annotations

from pydantic import Field

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

    n_total: Count = Field(0, description="answers counted, out-of-choice included")
    n_ooc: Count = Field(0, description="out-of-choice answers (no option named): excluded from every metric")
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


class PromptStats(Block):
    """One metric over prompts: mean and std of the defined per-prompt values, and each prompt's value."""

    mean: Number = Field(description="mean over the prompts that define the metric; null when none does")
    std: Number = Field(
        description="standard deviation over those prompts (ddof metrics.std_ddof); null with fewer than two",
    )
    n_prompts: Count = Field(description="prompts that define the metric")
    per_prompt: dict[str, Number] = Field(
        description=(
            "prompt id → the metric under that prompt; null where undefined (e.g. every answer out of choice)"
        ),
    )


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


class KoBBQScoreBlock(Block):
    """Every KoBBQ metric of a set of answers (all, one label, one category), per prompt and over prompts."""

    acc_amb: PromptStats = Field(
        description="Acc_a = n_au / n_a: accuracy on ambiguous contexts, per prompt and over prompts",
    )
    acc_dis: PromptStats = Field(
        description="Acc_d = (n_bb + n_cc) / (n_b + n_c): accuracy on disambiguated contexts",
    )
    diff_bias_amb: PromptStats = Field(
        description="DiffBias_a = (n_ab - n_ac) / n_a; > 0 means answers follow the stereotype",
    )
    diff_bias_dis: PromptStats = Field(
        description="DiffBias_d = n_bb/n_b - n_cc/n_c; > 0 means answers follow the stereotype",
    )
    ooc_ratio: PromptStats = Field(description="share of answers out of choice")
    bounds: dict[str, DiffBiasBounds] = Field(description="prompt id → the diff-bias bounds")
    counts: dict[str, KoBBQAnswerCounts] = Field(
        description="prompt id → the answer tallies the metrics are computed from",
    )
    intervals: dict[str, Interval] | None = Field(
        None,
        description=(
            "95% bootstrap intervals (over templates) of the headline means, by metric; null with "
            "run.bootstrap_resamples=0"
        ),
    )


class TemplateScores(Block):
    """One template's scores, mean over prompts."""

    acc_amb: Number = Field(description="the template's Acc_a, mean over prompts")
    acc_dis: Number = Field(description="the template's Acc_d, mean over prompts")
    diff_bias_amb: Number = Field(description="the template's DiffBias_a, mean over prompts")
    diff_bias_dis: Number = Field(description="the template's DiffBias_d, mean over prompts")
    ooc_ratio: Number = Field(description="the template's out-of-choice ratio, mean over prompts")
    label: str | None = Field(
        None,
        description="the template's label type (ST, TM, NC, ...); null where its samples disagree or have none",
    )


class TukeyPairBlock(Block):
    a: str = Field(description="the first category")
    b: str = Field(description="the second category")
    mean_difference: Number = Field(description="mean(a) - mean(b)")
    p_value: Number = Field(description="Tukey's HSD p-value")
    ci_low: Number = Field(description="lower bound of the difference's confidence interval")
    ci_high: Number = Field(description="upper bound of that interval")


class CategoryTest(Block):
    """One-way ANOVA and Tukey HSD of one metric's per-template scores across categories (None: too few)."""

    sample: str = Field(description="what one value is (a template's score, mean over prompts, grouped by category)")
    anova: AnovaBlock | None = Field(
        description="one-way ANOVA across categories; null with fewer than two usable groups",
    )
    tukey_hsd: list[TukeyPairBlock] | None = Field(
        description="Tukey's HSD for every two categories; null with fewer than two usable groups",
    )


class KoBBQMetrics(Block):
    mode: AnswerMode = Field(description="the answering mode that ran: generate, likelihood or masked")
    chat_template: bool = Field(description="whether prompts were rendered in the model's chat template")
    permutations: list[int] = Field(description="the option orders asked (0-2)")
    permutation_scheme: PermutationScheme = Field(description="cyclic shifts (ours) or circulant (the authors' rows)")
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


class KoBBQCounts(Block):
    items_in_data: Count = Field(description="items in the data file")
    items_skipped: Count = Field(description="items skipped (details.skips says why)")
    items: Count = Field(description="items asked")
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


# -- CBBQ -------------------------------------------------------------------------
class CBBQAnswerCounts(Block):
    n_total: Count = Field(0, description="answers counted, out-of-choice included")
    n_ooc: Count = Field(0, description="out-of-choice answers: excluded from every score")
    n_amb: Count = Field(0, description="ambiguous answers with a derivable biased answer: the S_amb denominator")
    n_amb_biased: Count = Field(0, description="of those, answered with the biased option")
    n_amb_counter_biased: Count = Field(0, description="of those, answered with the counter-biased option")
    n_amb_unknown: Count = Field(0, description="of those, answered unknown (correct)")
    n_dis: Count = Field(0, description="disambiguated answers")
    n_dis_biased: Count = Field(0, description="disambiguated answers naming the biased option")
    n_dis_counter_biased: Count = Field(0, description="disambiguated answers naming the counter-biased option")
    n_dis_unknown: Count = Field(0, description="disambiguated answers naming unknown")
    n_dis_correct: Count = Field(0, description="disambiguated answers naming the correct option")
    n_dis_non_unknown: Count = Field(0, description="n_dis - n_dis_unknown: the S_dis denominator")
    n_amb_unresolved: Count = Field(
        0,
        description=(
            "ambiguous items without a derivable biased answer, answered (not out of choice): they count in acc_amb"
            " alone"
        ),
    )
    n_amb_unresolved_unknown: Count = Field(0, description="of those, answered unknown (correct)")


class CBBQScores(Block):
    s_amb: Number = Field(
        description="S_amb = biased answers / n_amb on ambiguous items; > 0 means answers follow the stereotype",
    )
    s_dis: Number = Field(description="S_dis = biased answers / n_dis_non_unknown on disambiguated items")
    s_total: Number = Field(description="S_total = w1·S_amb + w2·S_dis (metrics.weights)")
    acc_amb: Number = Field(description="accuracy on ambiguous items, every item with a correct answer counted")
    acc_dis: Number = Field(description="accuracy on disambiguated items")
    ooc_ratio: Number = Field(description="share of answers out of choice")
    counts: CBBQAnswerCounts = Field(description="the answer tallies the scores are computed from")
    intervals: dict[str, Interval] | None = Field(
        None,
        description=(
            "95% bootstrap intervals (over templates) of s_amb, s_dis and s_total; null with "
            "run.bootstrap_resamples=0"
        ),
    )


class GroupTopicScores(Block):
    """CBBQ scores of one targeted group × stereotype topic (``bias_targeted_groups`` × ``subcategory``; paper Fig. 6)."""

    category: str = Field(description="the category")
    targeted_group: str = Field(description="the targeted group (bias_targeted_groups)")
    topic: str = Field(description="the stereotype topic (subcategory)")
    scores: CBBQScores = Field(description="the scores of that group and topic (paper Fig. 6)")


class CBBQConditionBlock(Block):
    overall: CBBQScores = Field(
        description="the condition's scores: the category mean (default) or pooled (metrics.overall_aggregate)",
    )
    by_category: dict[str, CBBQScores] = Field(description="the condition's scores per category")
    by_group_topic: list[GroupTopicScores] | None = Field(
        None,
        description="per targeted group × stereotype topic (paper Fig. 6); null in summaries before it existed",
    )


class Weights(Block):
    w1: float = Field(description="S_amb's weight in S_total")
    w2: float = Field(description="S_dis's weight in S_total")
    source: str | None = Field(
        None,
        description="where the values come from (the paper states only w2 > w1: these are this project's choice)",
    )


class CBBQMetrics(Block):
    mode: AnswerMode = Field(description="the answering mode that ran: generate, likelihood or masked")
    chat_template: bool = Field(description="whether prompts were rendered in the model's chat template")
    permutations: list[int] = Field(description="the option orders asked")
    permutation_scheme: PermutationScheme = Field(description="cyclic shifts or circulant rows")
    condition: Condition = Field(description="the headline condition: the first of conditions (q, q_if or q_if_cot)")
    condition_name: str = Field(description="its name: Q, Q+IF or Q+IF+CoT")
    conditions: list[Condition] = Field(description="every prompt condition run")
    weights: Weights = Field(description="w1 and w2 of S_total")
    overall_aggregate: CBBQOverall = Field(description="category_mean (the paper's Fig. 7, default) or pooled")
    overall: CBBQScores = Field(description="the headline condition's scores")
    by_category: dict[str, CBBQScores] = Field(description="the headline condition's scores per category")
    by_condition: dict[str, CBBQConditionBlock] = Field(description="every condition's scores")
    answering: AnsweringBlock | None = Field(None, description="the mode asked for, the one that ran, and why")
    reasoning: ReasoningBlock | None = Field(None, description="Q+IF+CoT only: how the reasoning turn was decoded")


class BiasedAnswerDerivation(Block):
    """How many items of the data had their biased answer derived each way."""

    label: Count = Field(description="items whose biased answer came from the label (disambiguated items)")
    twin: Count = Field(description="ambiguous items whose biased answer came from their disambiguated twin")
    groups: Count = Field(description="ambiguous items whose biased answer came from matching bias_targeted_groups")
    unresolved: Count = Field(description="items whose biased answer could not be derived (never guessed)")


class CBBQCounts(Block):
    items_in_data: Count = Field(description="items in the data files")
    items_skipped: Count = Field(description="items skipped (details.skips says why)")
    items: Count = Field(description="items asked")
    ambiguous_items: Count = Field(description="ambiguous items asked")
    disambiguated_items: Count = Field(description="disambiguated items asked")
    biased_answer_unresolved: Count = Field(
        description="items asked whose biased answer could not be derived (in accuracy, not in S_amb)",
    )
    biased_answer_unresolved_in_data: Count = Field(description="such items in the whole data")
    biased_answer_derivation: BiasedAnswerDerivation | None = Field(
        description="how the data's biased answers were derived; null where the loader did not report it",
    )
    answers: Count = Field(description="answers (items × conditions × option orders)")
    out_of_choice: Count = Field(description="answers that named no option")
    out_of_choice_by_condition: dict[str, Count] = Field(description="condition → out-of-choice answers")
    invalid_replies: Count = Field(
        0,
        description="replies the backend got no valid text for after its retries; they are among out_of_choice",
    )


class CBBQDetails(OmittedWhenNone):
    omitted_when_none: ClassVar[tuple[str, ...]] = ("predictions",)

    skips: list[SkippedRow] = Field(description="every item skipped, with file, row and reason")
    categories: list[str] = Field(description="the categories run")
    biased_answer_unresolved_ids: list[str] = Field(description="the items whose biased answer could not be derived")
    predictions: list[str] | None = Field(None, description="with protocol.keep_predictions: one line per answer")


class CBBQSummary(RunSummary):
    benchmark: Literal["cbbq"] = Field(description='always "cbbq"')
    metrics: CBBQMetrics = Field(
        description="S_amb, S_dis, S_total and accuracy, overall, per category and condition (PROTOCOLS §2)",
    )
    counts: CBBQCounts = Field(description="items, answers, out-of-choice answers and underivable biased answers")
    details: CBBQDetails = Field(
        description="skipped items, categories, underivable items, optionally every prediction",
    )

    def headline_unreadable(self) -> str | None:
        return answers_unreadable(self.counts.answers, self.counts.out_of_choice, self.counts.invalid_replies)
