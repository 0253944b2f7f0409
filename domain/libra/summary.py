"""LIBRA's typed summary: headline scores overall and per category and group, counts, per-triplet details.

Keys that exist only when the knowledge boundary was checked (the local-word
counts, ``details.local_words`` and ``details.invalid_triplets``) are None in
the models and absent from the JSON, as they always were.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from culturebias.domain.summary import Block, Count, Number, OmittedWhenNone, ProtocolOutcome, RunSummary

ModelType = Literal["causal", "masked"]


class LibraScoresBlock(Block):
    """The headline numbers of one set of triplets, on 0–100 (null: undefined, e.g. no valid triplet)."""

    lms: Number
    ss: Number
    icat: Number
    jsd: Number
    bbs: Number
    eicat: Number
    valid: Count
    invalid: Count
    local_words_checked: Count


class LibraMetrics(Block):
    model_type: ModelType
    overall: LibraScoresBlock
    by_category: dict[str, LibraScoresBlock]
    by_group: dict[str, LibraScoresBlock]


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
    score: Number  # cosine similarity or the judge's number; None: not compared, or no valid verdict
    understood: bool | None  # None: not checked
    triplets: Count


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

    benchmark_name: ClassVar[str] = "libra"


LibraOutcome = ProtocolOutcome[LibraMetrics, LibraCounts, LibraDetails]
