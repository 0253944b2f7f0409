"""Typed summary blocks of the papers' settings and statistics a single KoBBQ/CBBQ run reports (issue 17).

Optional fields of ``KoBBQMetrics`` / ``CBBQMetrics`` (``domain/kobbq/summary.py``, ``domain/cbbq/summary.py``):
older summaries without them still load.
"""

from __future__ import annotations

from typing import Literal

from culturebias.domain.bbq.options import AnswerMode, Mode
from culturebias.domain.summary import Block, Count, Number


class AnsweringBlock(Block):
    """Which answering mode ran, what was asked for, and why (PROTOCOLS §2, answering modes)."""

    requested: Mode
    mode: AnswerMode
    reason: str
    papers_mode: AnswerMode = "generate"  # both papers had their models generate
    matches_papers: bool


class ReasoningBlock(Block):
    """How CBBQ's Q+IF+CoT reasoning turn was decoded (PROTOCOLS §2: sampled, as in the paper; greedy as an option)."""

    decoding: Literal["sampled", "greedy"]
    sampling: str  # model.sampling's description of what ran, e.g. "sample (temperature=0.7, ...)"
    seed: int | None  # None: greedy (the seed changes nothing)
    max_new_tokens: int
    first_turn: str  # what the first turn carries


class SentenceWording(Block):
    """One sentence as asked, the paper's English original, and where the asked text comes from."""

    text: str
    paper_english: str
    source: str


class CBBQWording(Block):
    """The IF and CoT sentences a CBBQ run asked (summary ``metrics.wording``; domain/cbbq/wording.py)."""

    if_sentence: SentenceWording
    cot_sentence: SentenceWording


# -- KoBBQ statistics (paper Table 4, Figs. 3–4): one run's, and across runs (domain/kobbq/comparison.py) --
class AnovaBlock(Block):
    f: Number
    p_value: Number
    groups: list[str]
    left_out: list[str]


class RankSumRow(Block):
    metric: str
    label_type: str  # "all" or a label annotation (ST, TM, NC)
    a: str
    b: str
    statistic: Number  # positive: a's scores rank higher
    p_value: Number
    n_a: Count
    n_b: Count
    mark: str  # "***" p < .01, "**" p < .05, "*" p < .1


class TukeyRow(Block):
    a: str
    b: str
    mean_difference: Number  # mean(a) - mean(b)
    p_value: Number
    ci_low: Number
    ci_high: Number
    significant: bool  # p < 1 - confidence


class TukeyTest(Block):
    """One-way ANOVA and Tukey's HSD of one normalised metric across groups (models, categories or label types)."""

    metric: str
    confidence: float
    n: dict[str, Count]  # group → templates with a defined value
    means: dict[str, Number]
    anova: AnovaBlock
    pairs: list[TukeyRow]
    # Homogeneous subsets: maximal sets of groups no two of which differ significantly (a compact
    # letter display, one letter per subset). None in summaries written before it existed.
    homogeneous_groups: list[list[str]] | None = None


class LabelTypeScores(Block):
    """One data set's scores over all templates or one label type (paper Table 4): means over prompts."""

    data: str  # "this data" or the reference data set's file
    label_type: str  # "all", ST or TM
    answers: Count
    acc_amb: Number
    acc_dis: Number
    diff_bias_amb: Number
    diff_bias_dis: Number


class KoBBQRunTests(Block):
    """One run's tests (protocol.statistics): ANOVA and Tukey HSD on normalised diff-bias across
    categories and across label types; the Wilcoxon rank-sum against a reference data set per label type."""

    confidence: float
    normalisation: str
    sample: str
    across_categories: dict[str, TukeyTest | None]  # metric → test (None: fewer than two usable groups)
    across_label_types: dict[str, TukeyTest | None]
    marks: str
    reference: str | None = None  # the reference data set the rank-sum tests compare with
    rank_sum_reference: list[RankSumRow] | None = None
    # Table 4's scores beside the rank-sums: both data sets' accuracy and diff-bias, all and per ST/TM
    reference_scores: list[LabelTypeScores] | None = None
