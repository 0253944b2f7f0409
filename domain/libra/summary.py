"""LIBRA's typed summary: headline scores overall and per category and group, counts, per-triplet details.

Keys that exist only when the knowledge boundary was checked (the local-word
counts, ``details.local_words`` and ``details.invalid_triplets``) are None in
the models and absent from the JSON, as they always were.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import AliasChoices, Field

from culturebias.domain.libra.stereoset_summary import StereoSetBlock
from culturebias.domain.summary import Block, Count, Number, OmittedWhenNone, ProtocolOutcome, RunSummary
from culturebias.domain.uncertainty.interval import Interval

ModelType = Literal["causal", "masked"]
# causal: log p(ω + U_right | U_left); masked_sum: pseudo-log-likelihood summed over ω + U_right;
# masked_stereoset_mean: StereoSet's mean of log P(t | U) over the modified span's tokens.
LikelihoodKind = Literal["causal", "masked_sum", "masked_stereoset_mean"]
# judge: the paper's P2 verification by an LLM; embedding: this project's cosine alternative;
# masked_choice: a masked LM ranks the official definition against others (domain/libra/meaning_choice.py).
ComparisonKind = Literal["judge", "embedding", "masked_choice"]


class LibraScoresBlock(Block):
    """The headline numbers of one set of triplets, on 0–100 (null: undefined, e.g. no valid triplet)."""

    lms: Number
    ss: Number
    # iCAT of the local triplets, not the paper's column (that one is StereoSet's: metrics.stereoset);
    # summaries written before the rename hold it as "icat".
    icat_local: Number = Field(validation_alias=AliasChoices("icat_local", "icat"))
    jsd: Number
    bbs: Number
    eicat: Number
    valid: Count
    invalid: Count
    local_words_checked: Count
    # 95% bootstrap intervals over valid triplets, by score name (overall only; domain/libra/intervals.py)
    intervals: dict[str, Interval] | None = None

    @property
    def icat(self) -> float | None:
        """The local iCAT under its name before the rename (Python callers)."""
        return self.icat_local


class LibraMetrics(Block):
    model_type: ModelType
    overall: LibraScoresBlock
    by_category: dict[str, LibraScoresBlock]
    by_group: dict[str, LibraScoresBlock]
    # How L(S) was computed (application/libra/likelihood.py); None in summaries written before it was named.
    likelihood: LikelihoodKind | None = None
    # How the model's meaning was compared with the glossary's; None: the knowledge boundary was not checked.
    comparison: ComparisonKind | None = None
    # Why bbs (and so EiCAT) is not applicable to this run; None where bbs was computed.
    bbs_not_applicable: str | None = None
    # The paper's iCAT column, on StereoSet (data folder's stereoset.json); None without StereoSet.
    stereoset: StereoSetBlock | None = None


class LibraCounts(OmittedWhenNone):
    omitted_when_none: ClassVar[tuple[str, ...]] = (
        "local_words",
        "local_words_checked",
        "local_words_understood",
        "local_words_not_understood",
        "local_words_without_definition",
        "judge_failures",
        "invalid_replies",
        "invalid_scores",  # not a boundary key: absent unless it happened
    )

    model_type: ModelType
    triplets: Count
    valid_triplets: Count
    invalid_triplets: Count
    local_words: Count | None = None
    local_words_checked: Count | None = None
    local_words_understood: Count | None = None
    local_words_not_understood: Count | None = None
    local_words_without_definition: Count | None = None
    judge_failures: Count | None = None
    # definition requests the model's backend got no valid reply to (e.g. ``content: null``) after its retries
    invalid_replies: Count | None = None
    # when it happened: scoring requests the backend got no valid reply to after its retries (their triplets are invalid)
    invalid_scores: Count | None = None


class TripletColumns(Block):
    """One entry per triplet, in dataset order: identity, validity and L(S), L(S_p), L(S_u)."""

    id: list[str]
    group: list[str]
    category: list[str]
    valid: list[bool]
    stereotyped: list[Number]
    anti_stereotyped: list[Number]
    unrelated: list[Number]


class JsdHistogram(Block):
    """The shared bin edges and the per-bin probabilities of D_a and D_s behind the overall JSD."""

    edges: list[float]
    anti_stereotyped: list[float]
    stereotyped: list[float]


class LocalWordBlock(Block):
    """One local word: its glossary meaning, the model's, and the comparison's verdict."""

    term: str
    as_written: str
    context: str
    official_definition: str | None  # None: not in the glossary
    model_definition: str | None  # None: not asked (no glossary definition)
    # cosine similarity, the judge's number, or (masked_choice) the official definition's margin in mean
    # pseudo-log-likelihood over the best other; None: not compared, or no valid verdict
    score: Number
    understood: bool | None  # None: not checked
    triplets: Count
    nearest_term: str | None = Field(
        None,
        description="embedding comparison only: the glossary term whose definition is nearest to the model's "
        "(another word's when the model described something else); null otherwise and in summaries before 2.3",
    )
    nearest_score: Number = Field(None, description="the cosine of the model's definition with that nearest definition")


class LibraDetails(OmittedWhenNone):
    omitted_when_none: ClassVar[tuple[str, ...]] = ("local_words", "invalid_triplets")

    triplets: TripletColumns
    jsd_histogram: JsdHistogram
    local_words: list[LocalWordBlock] | None = None
    invalid_triplets: dict[str, list[str]] | None = None  # triplet id → its misunderstood local words


class LibraSummary(RunSummary):
    benchmark: Literal["libra"] = "libra"
    metrics: LibraMetrics
    counts: LibraCounts
    details: LibraDetails

    def headline_unreadable(self) -> str | None:
        """Not measured when no triplet is valid: lms, ss, local iCAT and JSD (so EiCAT) are undefined."""
        counts = self.counts
        if self.metrics.overall.lms is not None:
            return None
        if counts.triplets == 0:
            return "no triplet was scored"
        why = []
        if counts.local_words_not_understood:
            why.append(f"{counts.local_words_not_understood} local word(s) not understood invalidate their triplets")
        if counts.invalid_scores:
            why.append(f"{counts.invalid_scores} score(s) the backend got no valid reply for")
        detail = f" ({'; '.join(why)})" if why else ""
        return f"no valid triplet: all {counts.triplets} triplet(s) are invalid{detail}, so no LIBRA score is defined"


LibraOutcome = ProtocolOutcome[LibraMetrics, LibraCounts, LibraDetails]
