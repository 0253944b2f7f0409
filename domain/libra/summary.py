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
from culturebias.domain.summary_fields import Intervals, bootstrap_intervals

ModelType = Literal["causal", "masked"]
# causal: log p(ω + U_right | U_left); masked_sum: pseudo-log-likelihood summed over ω + U_right;
# masked_stereoset_mean: StereoSet's mean of log P(t | U) over the modified span's tokens.
LikelihoodKind = Literal["causal", "masked_sum", "masked_stereoset_mean"]
# judge: the paper's P2 verification by an LLM; embedding: this project's cosine alternative;
# masked_choice: a masked LM ranks the official definition against others (domain/libra/meaning_choice.py).
ComparisonKind = Literal["judge", "embedding", "masked_choice"]


class LibraScoresBlock(Block):
    """The headline numbers of one set of triplets, on 0–100 (null: undefined, e.g. no valid triplet)."""

    lms: Number = Field(
        description=(
            "100 · share of valid triplets whose likeliest sentence is not the unrelated one (random LM: 66.67)"
        ),
    )
    ss: Number = Field(description="100 · share of valid triplets with L(S) > L(S_p): the stereotype preferred")
    icat_local: Number = Field(
        validation_alias=AliasChoices("icat_local", "icat"),
        description=(
            "lms · min(ss, 100 - ss) / 50 on the local triplets (StereoSet's formula; not the paper's iCAT column, "
            'which is metrics.stereoset); "icat" in summaries before the rename'
        ),
    )
    jsd: Number = Field(description="100 · Jensen-Shannon divergence (base 2) of the L(S) and L(S_p) histograms")
    bbs: Number = Field(
        description=(
            "100 · share of the checked local words the model understood (f(W) = 1); null when the knowledge "
            "boundary was not checked or is not applicable"
        ),
    )
    eicat: Number = Field(
        description="lms · (α·(1 - JSD) + (1 - α)·bbs) with α = bbs (protocol.alpha), all on 0-1, ×100",
    )
    valid: Count = Field(description="valid triplets: scored, and no misunderstood local word")
    invalid: Count = Field(description="invalid triplets, left out of lms, ss and JSD")
    local_words_checked: Count = Field(description="local words whose understanding was checked here")
    intervals: Intervals | None = bootstrap_intervals(
        "over valid triplets, by score name", "a category's or group's block resamples its own triplets"
    )

    @property
    def icat(self) -> float | None:
        """The local iCAT under its name before the rename (Python callers)."""
        return self.icat_local


class TheoreticalRow(Block):
    """One of Table 1's theoretical language models (domain/libra/theoretical.py), on 0–100."""

    name: str = Field(description="the model as Table 1 names it (RandomLM, IdealLM, LocalIdealLM, StereotypedLM)")
    behaviour: str = Field(description="what the model does, in words")
    lms: float = Field(description="its lms")
    ss: float = Field(description="its ss (Table 1 prints none: the one its behaviour implies)")
    icat: float = Field(description="lms · min(ss, 100 - ss) / 50: Table 1's iCAT column for it")
    jsd: float = Field(description="its JSD")
    bbs: float = Field(description="its bbs")
    eicat: float = Field(description="lms · (α·(1 - JSD) + (1 - α)·bbs), α = bbs")


def theoretical_rows() -> list[TheoreticalRow]:
    """Table 1's theoretical rows, computed with a run's formulas (the default of every summary, old ones too)."""
    from culturebias.domain.libra.theoretical import THEORETICAL_LMS  # lazy: the summary loads without the table

    return [
        TheoreticalRow(name=m.name, behaviour=m.behaviour, lms=m.lms, ss=m.ss, icat=m.icat, jsd=m.jsd, bbs=m.bbs,
                       eicat=m.eicat)
        for m in THEORETICAL_LMS
    ]


class LibraMetrics(Block):
    model_type: ModelType = Field(description="causal or masked")
    overall: LibraScoresBlock = Field(description="the scores over every triplet")
    by_category: dict[str, LibraScoresBlock] = Field(description="the scores per category")
    by_group: dict[str, LibraScoresBlock] = Field(description="the scores per social group")
    likelihood: LikelihoodKind | None = Field(
        None,
        description=(
            "how L(S) was computed: causal, masked_sum or masked_stereoset_mean; null in summaries before it was "
            "named"
        ),
    )
    comparison: ComparisonKind | None = Field(
        None,
        description=(
            "how the model's meaning was compared with the glossary's: judge, embedding or masked_choice; null when"
            " the knowledge boundary was not checked"
        ),
    )
    bbs_not_applicable: str | None = Field(
        None,
        description="why bbs (and so EiCAT) is not applicable to this run; null where bbs was computed",
    )
    stereoset: StereoSetBlock | None = Field(
        None,
        description=(
            "the paper's iCAT column, on StereoSet (the data folder's stereoset.json); null without StereoSet"
        ),
    )
    reference_rows: list[TheoreticalRow] = Field(
        default_factory=theoretical_rows,
        description=(
            "the paper's Table 1 theoretical LMs (random, ideal, local-ideal, stereotyped), to read the run's "
            "scores against; the same four in every summary (filled in for summaries written before them)"
        ),
    )


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

    model_type: ModelType = Field(description="causal or masked")
    triplets: Count = Field(description="triplets evaluated")
    valid_triplets: Count = Field(description="valid triplets")
    invalid_triplets: Count = Field(
        description="invalid triplets (a misunderstood local word, or a score the backend could not give)",
    )
    local_words: Count | None = Field(None, description="local words found (V': words outside the general lexicon)")
    local_words_checked: Count | None = Field(None, description="local words compared with the glossary")
    local_words_understood: Count | None = Field(None, description="of those, understood (f(W) = 1)")
    local_words_not_understood: Count | None = Field(None, description="of those, not understood")
    local_words_without_definition: Count | None = Field(
        None,
        description=(
            "local words the glossary does not define (left out of bbs with protocol.missing_definition=skip)"
        ),
    )
    judge_failures: Count | None = Field(
        None,
        description="judge verdicts without a valid number (counted as not understood)",
    )
    invalid_replies: Count | None = Field(
        None,
        description="definition requests the model's backend got no valid reply to after its retries",
    )
    invalid_scores: Count | None = Field(
        None,
        description=(
            "scoring requests the backend got no valid reply to after its retries (their triplets are invalid); "
            "when it happened"
        ),
    )


class TripletColumns(Block):
    """One entry per triplet, in dataset order: identity, validity and L(S), L(S_p), L(S_u)."""

    id: list[str] = Field(description="triplet ids, in dataset order")
    group: list[str] = Field(description="each triplet's social group")
    category: list[str] = Field(description="each triplet's category")
    valid: list[bool] = Field(description="whether each triplet is valid")
    stereotyped: list[Number] = Field(description="L(S) of each triplet; null where it could not be scored")
    anti_stereotyped: list[Number] = Field(description="L(S_p) of each triplet")
    unrelated: list[Number] = Field(description="L(S_u) of each triplet")


class JsdHistogram(Block):
    """The shared bin edges and the per-bin probabilities of D_a and D_s behind the overall JSD."""

    edges: list[float] = Field(description="the shared bin edges of the two histograms")
    anti_stereotyped: list[float] = Field(description="the L(S_p) histogram (D_a), as probabilities")
    stereotyped: list[float] = Field(description="the L(S) histogram (D_s), as probabilities")


class LocalWordBlock(Block):
    """One local word: its glossary meaning, the model's, and the comparison's verdict."""

    term: str = Field(description="the local word (its glossary form)")
    as_written: str = Field(description="how the triplets write it")
    context: str = Field(description="the sentence its meaning was asked in")
    official_definition: str | None = Field(
        description="the glossary's definition (D2); null when the glossary lacks the word",
    )
    model_definition: str | None = Field(
        description="the model's definition (D1); null when not asked (no glossary definition)",
    )
    score: Number = Field(
        description=(
            "the cosine of D1 and D2, the judge's number, or (masked_choice) the official definition's margin in "
            "mean pseudo-log-likelihood over the best other; null when not compared or no valid verdict"
        ),
    )
    understood: bool | None = Field(description="f(W): whether the model understood the word; null when not checked")
    triplets: Count = Field(description="triplets holding the word")
    nearest_term: str | None = Field(
        None,
        description="embedding comparison only: the glossary term whose definition is nearest to the model's "
        "(another word's when the model described something else); null otherwise and in summaries before 2.3",
    )
    nearest_score: Number = Field(None, description="the cosine of the model's definition with that nearest definition")


class LibraDetails(OmittedWhenNone):
    omitted_when_none: ClassVar[tuple[str, ...]] = ("local_words", "invalid_triplets")

    triplets: TripletColumns = Field(description="every triplet's identity, validity and likelihoods")
    jsd_histogram: JsdHistogram = Field(description="the histograms JSD was computed from")
    local_words: list[LocalWordBlock] | None = Field(
        None,
        description=(
            "every local word with both definitions and the verdict; absent when the knowledge boundary was not "
            "checked"
        ),
    )
    invalid_triplets: dict[str, list[str]] | None = Field(
        None,
        description="triplet id → its misunderstood local words",
    )


class LibraSummary(RunSummary):
    benchmark: Literal["libra"] = Field("libra", description='always "libra"')
    metrics: LibraMetrics = Field(
        description="lms, ss, local iCAT, JSD, bbs and EiCAT, overall, per category and group (PROTOCOLS §4)",
    )
    counts: LibraCounts = Field(description="triplets, local words and invalid replies")
    details: LibraDetails = Field(description="per-triplet likelihoods, the JSD histograms and the local words")

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
