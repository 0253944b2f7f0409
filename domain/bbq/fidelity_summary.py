"""Typed summary blocks of the papers' settings and statistics a single KoBBQ/CBBQ run reports (issue 17).

Optional fields of ``KoBBQMetrics`` / ``CBBQMetrics`` (``domain/kobbq/summary.py``, ``domain/cbbq/summary.py``):
older summaries without them still load.
"""

from __future__ import annotations

import math

from pydantic import Field

from typing import TYPE_CHECKING, Literal

from culturebias.domain.bbq.options import AnswerMode, Mode
from culturebias.domain.bbq.summary import DiffBiasMetrics
from culturebias.domain.summary import Block, Count, Number

if TYPE_CHECKING:  # the results these blocks are written from (their module imports scipy)
    from culturebias.domain.bbq.statistics import AnovaResult, TukeyPair


class AnsweringBlock(Block):
    """Which answering mode ran, what was asked for, and why (PROTOCOLS §2, answering modes)."""

    requested: Mode = Field(description="protocol.mode as set: auto, generate, likelihood or masked")
    mode: AnswerMode = Field(
        description=(
            "the mode that ran: generate (the reply parsed into an option), likelihood (option letters scored) or "
            "masked"
        ),
    )
    reason: str = Field(description="why that mode ran (auto's choice, or the setting)")
    papers_mode: AnswerMode = Field("generate", description="the mode both papers used: generate")
    matches_papers: bool = Field(description="whether the mode that ran is the papers'")


class ReasoningBlock(Block):
    """How CBBQ's Q+IF+CoT reasoning turn was decoded (PROTOCOLS §2: sampled, as in the paper; greedy as an option)."""

    decoding: Literal["sampled", "greedy"] = Field(
        description="how the Q+IF+CoT reasoning turn was decoded: sampled (as in the paper) or greedy",
    )
    sampling: str = Field(description='model.sampling\'s account of what ran, e.g. "sample (temperature=0.7, ...)"')
    seed: int | None = Field(description="the sampling seed; null when greedy (the seed changes nothing)")
    max_new_tokens: int = Field(description="the reasoning turn's token budget")
    first_turn: str = Field(
        description="what the first turn carries (the task line, the IF sentence, the question and the CoT sentence)",
    )


class SentenceWording(Block):
    """One sentence as asked, the paper's English original, and where the asked text comes from."""

    text: str = Field(description="the sentence the run asked, verbatim (Simplified Chinese unless protocol.* set it)")
    paper_english: str = Field(description="the paper's English original of the sentence (CBBQ paper §4.3)")
    source: str = Field(
        description="where the asked text comes from: culturebias's translation of the paper's sentence, or the option that set it",
    )


class CBBQWording(Block):
    """The IF and CoT sentences a CBBQ run asked (summary ``metrics.wording``; domain/cbbq/wording.py)."""

    if_sentence: SentenceWording = Field(
        description="the IF (instruction-following) sentence of the Q+IF and Q+IF+CoT conditions (protocol.if_sentence)",
    )
    cot_sentence: SentenceWording = Field(
        description="the CoT sentence of the Q+IF+CoT condition's reasoning turn (protocol.cot_sentence)",
    )


# -- KoBBQ statistics (paper Table 4, Figs. 3–4): one run's, and across runs (domain/kobbq/comparison.py) --
class AnovaBlock(Block):
    f: Number = Field(description="the one-way ANOVA's F statistic")
    p_value: Number = Field(description="its p-value")
    groups: list[str] = Field(description="the groups compared (each with at least two defined values)")
    left_out: list[str] = Field(description="groups left out: fewer than two defined values")

    @classmethod
    def of(cls, anova: AnovaResult) -> AnovaBlock:
        return cls(f=anova.f_statistic, p_value=anova.p_value, groups=list(anova.groups), left_out=list(anova.left_out))


class RankSumRow(Block):
    metric: str = Field(description="the metric compared (per-template values)")
    label_type: str = Field(description='"all" or a label annotation (ST, TM, NC)')
    a: str = Field(description="the first model or data set")
    b: str = Field(description="the second")
    statistic: Number = Field(description="the rank-sum z; positive when a's scores rank higher")
    p_value: Number = Field(description="two-sided p-value")
    n_a: Count = Field(description="templates with a defined value for a")
    n_b: Count = Field(description="the same for b")
    mark: str = Field(description='"***" p < .01, "**" p < .05, "*" p < .1 (the paper\'s Table 4 marks)')


class TukeyPairBlock(Block):
    """Tukey's HSD of two groups (categories, label types or models): their mean difference, p and interval."""

    a: str = Field(description="the first group")
    b: str = Field(description="the second group")
    mean_difference: Number = Field(description="mean(a) - mean(b)")
    p_value: Number = Field(description="Tukey's HSD p-value (family-wise)")
    ci_low: Number = Field(description="lower bound of the family-wise confidence interval of the difference")
    ci_high: Number = Field(description="upper bound of that interval")

    @staticmethod
    def of(pair: TukeyPair) -> TukeyPairBlock:
        return TukeyPairBlock(
            a=pair.group_a, b=pair.group_b, mean_difference=pair.mean_difference, p_value=pair.p_value,
            ci_low=pair.ci_low, ci_high=pair.ci_high,
        )  # fmt: skip


class TukeyRow(TukeyPairBlock):
    """A Tukey pair with its verdict at the test's confidence."""

    significant: bool = Field(description="p < 1 - confidence")

    @staticmethod
    def judged(pair: TukeyPair, alpha: float) -> TukeyRow:
        """The row of ``pair``, significant when its p-value is below ``alpha``."""
        significant = math.isfinite(pair.p_value) and pair.p_value < alpha
        return TukeyRow(**TukeyPairBlock.of(pair).model_dump(), significant=significant)


class TukeyTest(Block):
    """One-way ANOVA and Tukey's HSD of one per-template metric across groups (models, categories or label types)."""

    metric: str = Field(
        description="the metric tested: diff-bias normalised over its bound, or (across label types) raw accuracy"
    )
    confidence: float = Field(description="the family-wise confidence level (0.99, as the paper)")
    n: dict[str, Count] = Field(description="group → templates with a defined value")
    means: dict[str, Number] = Field(description="group → mean value (normalised for diff-bias)")
    anova: AnovaBlock = Field(description="the one-way ANOVA across the groups")
    pairs: list[TukeyRow] = Field(description="Tukey's HSD for every two groups")
    homogeneous_groups: list[list[str]] | None = Field(
        None,
        description=(
            "maximal sets of groups no two of which differ significantly (a compact letter display); null in "
            "summaries before it existed"
        ),
    )


class LabelTypeRow(Block):
    """Which data set and label type a row of Table 4 is, and how many answers it holds."""

    data: str = Field(description='"this data" (the run\'s data set) or the reference data set\'s file')
    label_type: str = Field(description='"all" (every template) or a label annotation (ST, TM)')
    answers: Count = Field(description="how many answers (items × prompts × option orders) the row's scores are computed from")


# Bases listed metrics first so that the row's fields come first (pydantic orders inherited fields from the last base).
class LabelTypeScores(DiffBiasMetrics[Number], LabelTypeRow):
    """One data set's scores over all templates or one label type (paper Table 4): means over prompts."""


class KoBBQRunTests(Block):
    """One run's tests (protocol.statistics): ANOVA and Tukey HSD on normalised diff-bias across
    categories and across label types (there on accuracy too); the Wilcoxon rank-sum against a reference data set per label type."""

    confidence: float = Field(description="the family-wise confidence level of the Tukey tests (0.99)")
    normalisation: str = Field(description="how diff-bias was normalised (over its bound per template)")
    sample: str = Field(description="what one value of the tests is (a template's score, mean over prompts)")
    across_categories: dict[str, TukeyTest | None] = Field(
        description="metric → ANOVA and Tukey HSD across categories; null with fewer than two usable groups",
    )
    across_label_types: dict[str, TukeyTest | None] = Field(
        description="metric → the same across label types, for accuracy (acc_amb, acc_dis) as for normalised diff-bias (Fig. 4)"
    )
    marks: str = Field(description="what the rank-sum marks mean")
    reference: str | None = Field(
        None,
        description=(
            "the reference data set the rank-sum tests compare with (reference_samples.tsv); null without one"
        ),
    )
    rank_sum_reference: list[RankSumRow] | None = Field(
        None,
        description="Wilcoxon rank-sum of this run against the reference data set, per label type; null without one",
    )
    reference_scores: list[LabelTypeScores] | None = Field(
        None,
        description="Table 4's scores beside the rank-sums: both data sets' accuracy and diff-bias, all and per label type",
    )
