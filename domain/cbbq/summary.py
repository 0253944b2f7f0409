"""The typed summary.json of a CBBQ run (field names and order are summary.json's keys).

Every ratio is a ``Number``: an undefined one (empty denominator) is null.
"""

from __future__ import annotations

from pydantic import Field

from typing import ClassVar, Literal

from culturebias.domain.bbq.fidelity_summary import AnsweringBlock, CBBQWording, ReasoningBlock
from culturebias.domain.bbq.summary import AnswerTotals, AskedSetup, ItemCounts, answers_unreadable
from culturebias.domain.cbbq.options import CBBQOverall
from culturebias.domain.cbbq.prompts import Condition
from culturebias.domain.cbbq.released_prompt import PromptSet
from culturebias.domain.cbbq.table4 import Table4Row
from culturebias.domain.skips import SkippedRow
from culturebias.domain.summary import Block, Count, Number, OmittedWhenNone, RunSummary
from culturebias.domain.summary_fields import Intervals, bootstrap_intervals


class CBBQAnswerCounts(AnswerTotals):
    """The answer tallies (totals inherited) by context, biased-answer derivation and option named."""

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
    intervals: Intervals | None = bootstrap_intervals(
        "(over templates) of s_amb, s_dis and s_total", "a category's block resamples its own templates"
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


class CBBQMetrics(AskedSetup):
    """How the answers were asked (the inherited head), the conditions and weights, then every score."""

    condition: Condition = Field(
        description="the headline condition: the first of conditions (q, q_if, q_if_cot or q_explain)"
    )
    condition_name: str = Field(description="its name: Q, Q+IF, Q+IF+CoT or Q+Explain")
    conditions: list[Condition] = Field(description="every prompt condition run")
    weights: Weights = Field(description="w1 and w2 of S_total")
    overall_aggregate: CBBQOverall = Field(description="category_mean (the paper's Fig. 7, default) or pooled")
    overall: CBBQScores = Field(description="the headline condition's scores")
    by_category: dict[str, CBBQScores] = Field(description="the headline condition's scores per category")
    by_condition: dict[str, CBBQConditionBlock] = Field(description="every condition's scores")
    answering: AnsweringBlock | None = Field(None, description="the mode asked for, the one that ran, and why")
    reasoning: ReasoningBlock | None = Field(None, description="Q+IF+CoT only: how the reasoning turn was decoded")
    wording: CBBQWording | None = Field(
        None, description="Q+IF and Q+IF+CoT: the IF and CoT sentences asked, the paper's English, and the wording's source"
    )
    prompt_set: PromptSet = Field(
        "culturebias", description="culturebias (the project's task and answer lines) or released (the authors' prompt)"
    )
    prompt_source: str | None = Field(None, description="where the prompts' wording comes from (file and commit)")


class BiasedAnswerDerivation(Block):
    """How many items of the data had their biased answer derived each way."""

    label: Count = Field(description="items whose biased answer came from the label (disambiguated items)")
    twin: Count = Field(description="ambiguous items whose biased answer came from their disambiguated twin")
    groups: Count = Field(description="ambiguous items whose biased answer came from matching bias_targeted_groups")
    unresolved: Count = Field(description="items whose biased answer could not be derived (never guessed)")


class CBBQCounts(ItemCounts):
    """Items (the inherited head) by context, underivable biased answers, answers and out-of-choice answers."""

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
    table4: list[Table4Row] | None = Field(
        None,
        description="every category's instances in the data against the paper's Table 4 (a comparison, not a check); "
        "null where the loader did not count them",
    )
    explained_answers: Count = Field(
        0, description="Q+Explain answers whose reply carried an explanation (exported for review)"
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
