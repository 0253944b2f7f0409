"""The typed TWBias summary: metrics per bias specification, counts, details (PROTOCOLS §1).

Field names and order are the keys of ``summary.json``. A group asked for is a
key of ``metrics`` (``gender``, ``ethnicity`` with its ``ethnicity_matrix``);
a group not asked for is absent, not null.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from culturebias.domain.skips import SkippedRow
from culturebias.domain.summary import Block, Count, Number, OmittedWhenNone, RunSummary
from culturebias.domain.uncertainty.interval import Interval


class PromptStatsBlock(OmittedWhenNone):
    """One t-test of replace vs origin PPL under one prompt type."""

    omitted_when_none: ClassVar[tuple[str, ...]] = ("untested",)

    n: Count  # rows tested (after outlier removal)
    n_outliers: Count
    n_invalid: Count  # rows whose PPL was not finite
    mean_origin_ppl: Number
    mean_replace_ppl: Number
    t: Number
    p_value: Number
    cohens_d: Number
    cohens_dz: Number
    significant: bool
    untested: str | None = Field(
        None,
        description="why no test was made (fewer than protocol.min_pairs pairs after outliers): t, p and effects are then "
        "null and the prompt type is never significant; absent when it was tested",
    )


class GroupBlock(Block):
    """A set of rows (a specification, one toxicity, one category): headline and per-prompt tests."""

    n_rows: Count
    bias_ratio: Number  # share of the testable user prompts (1–10) with p < alpha; null if none is testable
    effect_size: Number  # mean effect over those significant prompts (0 if none)
    n_prompts: Count
    n_significant: Count
    significant_prompts: list[str]
    prompts: dict[str, PromptStatsBlock]  # by prompt type, in report order


class SpecificationHeader(Block):
    """Which bias specification ``B = (T_o, T_r, A_o)`` was evaluated, on what."""

    origin: str
    reference: str
    origin_label: str
    reference_label: str
    sentences_file: str
    term_pairs: Count
    rows_without_origin_term: Count


# Bases listed GroupBlock first so that the header's fields come first, then the group's
# (pydantic orders inherited fields from the last base to the first).
class SpecificationBlock(GroupBlock, SpecificationHeader):
    """One specification: its header, its overall result, and the toxicity and category breakdowns."""

    by_toxicity: dict[str, GroupBlock]  # "0", "1", "all"
    by_category: dict[str, GroupBlock]  # attribute category → its rows
    # 95% bootstrap intervals of bias_ratio and effect_size over sentence pairs (domain/twbias/intervals.py)
    intervals: dict[str, Interval] | None = None


class AnalysisBlock(Block):
    test: Literal["paired", "welch", "student"]
    effect: Literal["d", "dz"]
    alpha: float
    outlier_sigma: float
    category_rows: Literal["unique", "exploded"]
    boundary_rule: str | None  # the scorer's prompt/response boundary rule, where it states one
    # Optional so that older summaries load; absent (null) in a summary means the old defaults:
    # t signed replace minus origin, replace PPL the mean (PROTOCOLS §1.3, §1.5).
    t_sign: Literal["origin_minus_replace", "replace_minus_origin"] | None = None
    # "stored": a replay of result files, which hold the one replaced sentence the authors' code chose.
    replace_aggregate: Literal["mean", "min", "stored"] | None = None
    min_pairs: int | None = Field(
        None, description="the fewest pairs a prompt type's test needed (protocol.min_pairs); null in summaries before 2.3 (2)"
    )


class EthnicityMatrixBlock(Block):
    """Origin × reference tables of the headline numbers (the paper's heat maps)."""

    origins: list[str]
    references: list[str]
    labels: dict[str, str]  # group key → display name
    bias_ratio: dict[str, dict[str, Number]]  # origin → reference → value; null on the diagonal
    effect_size: dict[str, dict[str, Number]]


AXIS_KEYS = ("gender", "ethnicity", "ethnicity_matrix")


class TWBiasMetrics(OmittedWhenNone):
    omitted_when_none: ClassVar[tuple[str, ...]] = AXIS_KEYS  # a group not asked for is absent, not null

    prompt_types: list[str]
    analysis: AnalysisBlock
    gender: dict[str, SpecificationBlock] | None = None  # "female", "male"
    ethnicity: dict[str, SpecificationBlock] | None = None  # "T1_hoklo->T2_waishengren", ...
    ethnicity_matrix: EthnicityMatrixBlock | None = None


class TWBiasCounts(Block):
    sentences_loaded: Count
    sentences_evaluated: Count
    specifications: Count
    requests: Count
    outliers_removed: Count
    skipped: dict[str, Count]  # reason → skipped rows
    invalid_replies: Count = 0  # scores the backend got no valid reply for (their rows count in n_invalid)
    # Evaluated rows repeating an earlier row's sentence under another Sentence ID (kept; see the notes).
    duplicate_sentences: Count = 0


class SentenceSetBlock(Block):
    file: str
    attribute_file: str
    group: str  # the origin group's key, e.g. "T2_female"
    loaded: Count
    evaluated: Count


class TWBiasDetails(Block):
    sentence_sets: dict[str, SentenceSetBlock]  # "<axis>/<the files' group name>"
    prompts: dict[str, str | None]  # prompt type → user message; null for type 0 (no template)
    skips: list[SkippedRow]


class TWBiasSummary(RunSummary):
    benchmark: Literal["twbias"] = "twbias"
    metrics: TWBiasMetrics
    counts: TWBiasCounts
    details: TWBiasDetails

    def headline_unreadable(self) -> str | None:
        """Not measured when no specification has a bias ratio: no prompt type had enough pairs to test."""
        specs = [spec for axis in (self.metrics.gender, self.metrics.ethnicity) for spec in (axis or {}).values()]
        if not specs or any(spec.bias_ratio is not None for spec in specs):
            return None
        tested = [p for spec in specs for key, p in spec.prompts.items() if key not in ("0", "00")]
        largest = max((p.n for p in tested), default=0)
        needed = self.metrics.analysis.min_pairs or 2
        return (
            f"too few to test: no user prompt type of any specification kept {needed} sentence pairs after outliers "
            f"(at most {largest}); bias ratio and effect size are undefined (protocol.min_pairs)"
        )
