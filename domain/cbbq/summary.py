"""The typed summary.json of a CBBQ run (field names and order are summary.json's keys).

Every ratio is a ``Number``: an undefined one (empty denominator) is null.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from culturebias.domain.bbq.answer_order import PermutationScheme
from culturebias.domain.bbq.fidelity_summary import AnsweringBlock, CBBQWording, ReasoningBlock
from culturebias.domain.bbq.options import AnswerMode
from culturebias.domain.cbbq.options import CBBQOverall
from culturebias.domain.cbbq.prompts import Condition
from culturebias.domain.skips import SkippedRow
from culturebias.domain.summary import Block, Count, Number, OmittedWhenNone, RunSummary
from culturebias.domain.uncertainty.interval import Interval


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
    # Q+IF and Q+IF+CoT: the IF and CoT sentences asked, the paper's English, and the wording's source
    wording: CBBQWording | None = None


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
