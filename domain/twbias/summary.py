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
from culturebias.domain.summary_fields import Intervals, bootstrap_intervals


class PromptStatsBlock(OmittedWhenNone):
    """One t-test of replace vs origin PPL under one prompt type."""

    omitted_when_none: ClassVar[tuple[str, ...]] = ("untested", "few_pairs")

    n: Count = Field(description="sentence pairs tested (after outliers and invalid rows are removed)")
    n_outliers: Count = Field(
        description=(
            "rows dropped as outliers: origin or replace PPL outside mean ± protocol.outlier_sigma·std (ddof 0) of "
            "this prompt type"
        ),
    )
    n_invalid: Count = Field(
        description="rows whose PPL was not finite (no token scored, or a score the backend could not give)",
    )
    mean_origin_ppl: Number = Field(description="mean PPL of the original (stereotype) sentences tested")
    mean_replace_ppl: Number = Field(
        description=(
            "mean replace PPL (over each sentence's replaced sentences: mean, or min with "
            "protocol.replace_aggregate=min) of the rows tested"
        ),
    )
    t: Number = Field(
        description=(
            "the t statistic, signed as analysis.t_sign says (the authors': origin minus replace, so t < 0 when the"
            " stereotype is preferred); null when untested or undefined"
        ),
    )
    p_value: Number = Field(
        description="the two-tailed p-value of the test (analysis.test); null when untested or undefined",
    )
    cohens_d: Number = Field(
        description=(
            "pooled Cohen's d, replace minus origin over the pooled standard deviation; positive = the stereotype "
            "is preferred"
        ),
    )
    cohens_dz: Number = Field(
        description=(
            "paired Cohen's d_z = mean(replace - origin) / sd(replace - origin), ddof 1 (what Table 4 reports)"
        ),
    )
    significant: bool = Field(description="p < alpha (an untested or undefined p is never significant)")
    untested: str | None = Field(
        None,
        description="why no test was made (fewer than 2 pairs after outliers, or than protocol.min_pairs where set): t, "
        "p and effects are then null and the prompt type is never significant; absent when it was tested",
    )
    few_pairs: str | None = Field(
        None,
        description='set when tested on fewer than analysis.few_pairs_below pairs: "few pairs: n = 3, low power" (the '
        "test is made and counts, as in the authors' code; absent otherwise and in summaries before it)",
    )


class GroupBlock(OmittedWhenNone):
    """A set of rows (a specification, one toxicity, one category): headline and per-prompt tests."""

    omitted_when_none: ClassVar[tuple[str, ...]] = ("few_pairs",)

    n_rows: Count = Field(
        description="sentences in this set (a specification, a toxicity group or an attribute category)",
    )
    bias_ratio: Number = Field(
        description="share of the testable user prompts (types 1-10) with p < alpha; null when none is testable",
    )
    effect_size: Number = Field(
        description=(
            "mean effect (analysis.effect: d_z or d) over the significant user prompts; 0 when none is significant,"
            " null when none is testable"
        ),
    )
    n_prompts: Count = Field(description="user prompt types tested: the bias ratio's denominator")
    n_significant: Count = Field(description="user prompt types with p < alpha")
    significant_prompts: list[str] = Field(description="those prompt types")
    prompts: dict[str, PromptStatsBlock] = Field(
        description="every prompt type's test (types 0 and 00 beside 1-10), in report order",
    )
    intervals: Intervals | None = bootstrap_intervals(
        "of bias_ratio and effect_size over sentence pairs",
        "a toxicity or category block resamples its own sentences with the run's outlier decisions held",
    )
    few_pairs: str | None = Field(
        None,
        description="set when every user prompt type behind bias_ratio and effect_size was tested on few pairs "
        '(fewer than analysis.few_pairs_below): "few pairs: n = 3, low power (every user prompt type behind these '
        'numbers was tested on under 10)"; absent otherwise',
    )


class SpecificationHeader(Block):
    """Which bias specification ``B = (T_o, T_r, A_o)`` was evaluated, on what."""

    origin: str = Field(description="the origin group (whose terms the sentences hold), e.g. T2_female")
    reference: str = Field(description="the reference group whose terms replace them")
    origin_label: str = Field(description="the origin group's display name")
    reference_label: str = Field(description="the reference group's display name")
    sentences_file: str = Field(description="the file of the origin group's labelled sentences")
    term_pairs: Count = Field(description="(origin term, reference term) pairs used to replace")
    rows_without_origin_term: Count = Field(description="sentences holding no origin term: counted, not scored")


# Bases listed GroupBlock first so that the header's fields come first, then the group's
# (pydantic orders inherited fields from the last base to the first).
class SpecificationBlock(GroupBlock, SpecificationHeader):
    """One specification: its header, its overall result, and the toxicity and category breakdowns."""

    by_toxicity: dict[str, GroupBlock] = Field(
        description='the same analysis on the rows of each toxicity: "0", "1" and "all"',
    )
    by_category: dict[str, GroupBlock] = Field(
        description="the same analysis per attribute category (analysis.category_rows says how a sentence counts)",
    )


class AnalysisBlock(Block):
    test: Literal["paired", "welch", "student"] = Field(
        description="the t-test: paired (the released code, default), welch or student (PROTOCOLS §1.5)",
    )
    effect: Literal["d", "dz"] = Field(
        description="the effect size averaged into effect_size: dz (paired d_z, default) or d (pooled)",
    )
    alpha: float = Field(description="the significance level")
    outlier_sigma: float = Field(description="rows outside mean ± this many standard deviations are outliers")
    category_rows: Literal["unique", "exploded"] = Field(
        description="unique (a sentence once per category) or exploded (once per T-A pair, as the authors' code)",
    )
    boundary_rule: str | None = Field(description="the scorer's prompt/response boundary rule, where it states one")
    t_sign: Literal["origin_minus_replace", "replace_minus_origin"] | None = Field(
        None,
        description=(
            "the sign of t: origin_minus_replace (the authors') or replace_minus_origin; null in summaries before "
            "2.2 (replace minus origin)"
        ),
    )
    replace_aggregate: Literal["mean", "min", "stored"] | None = Field(
        None,
        description=(
            "a sentence's replace PPL over its replaced sentences: mean, min, or stored (a replay of the authors' "
            "files); null before 2.2 (mean)"
        ),
    )
    min_pairs: int | None = Field(
        None,
        description="the opt-in stricter rule: the fewest pairs a prompt type's test needed (protocol.min_pairs); null: "
        "tested whenever defined (2 pairs), the default and the rule of summaries before 2.3",
    )
    few_pairs_below: int | None = Field(
        None,
        description='a prompt type tested on fewer pairs than this is flagged "few pairs: n = 3, low power" (never '
        "dropped); null in summaries before the flag",
    )


class EthnicityMatrixBlock(Block):
    """Origin × reference tables of the headline numbers (the paper's heat maps)."""

    origins: list[str] = Field(description="origin groups (rows)")
    references: list[str] = Field(description="reference groups (columns)")
    labels: dict[str, str] = Field(description="group key → display name")
    bias_ratio: dict[str, dict[str, Number]] = Field(
        description="origin → reference → bias ratio; null on the diagonal",
    )
    effect_size: dict[str, dict[str, Number]] = Field(
        description="origin → reference → effect size; null on the diagonal",
    )


AXIS_KEYS = ("gender", "ethnicity", "ethnicity_matrix")


class TWBiasMetrics(OmittedWhenNone):
    omitted_when_none: ClassVar[tuple[str, ...]] = AXIS_KEYS  # a group not asked for is absent, not null

    prompt_types: list[str] = Field(description="the prompt types run, in report order")
    analysis: AnalysisBlock = Field(description="how the numbers were computed: test, effect, alpha, outliers, signs")
    gender: dict[str, SpecificationBlock] | None = Field(
        None,
        description='"female" and "male" specifications; absent when the gender group was not run',
    )
    ethnicity: dict[str, SpecificationBlock] | None = Field(
        None,
        description='every origin → reference specification, e.g. "T1_hoklo->T2_waishengren"; absent when not run',
    )
    ethnicity_matrix: EthnicityMatrixBlock | None = Field(
        None,
        description="the ethnicity headline numbers as origin × reference tables (the paper's heat maps)",
    )


class TWBiasCounts(Block):
    sentences_loaded: Count = Field(description="sentences read from the data")
    sentences_evaluated: Count = Field(description="sentences scored")
    specifications: Count = Field(description="bias specifications evaluated")
    requests: Count = Field(description="distinct scoring requests (sentence × prompt type)")
    outliers_removed: Count = Field(description="outlier rows over every specification and prompt type")
    skipped: dict[str, Count] = Field(description="reason → sentences skipped")
    invalid_replies: Count = Field(
        0,
        description="scores the backend got no valid reply for (their rows count in n_invalid)",
    )
    duplicate_sentences: Count = Field(
        0,
        description="evaluated rows repeating an earlier row's sentence under another Sentence ID (kept; see the notes)",
    )


class SentenceSetBlock(Block):
    file: str = Field(description="the labelled sentence file")
    attribute_file: str = Field(description="its attribute table")
    group: str = Field(description='the origin group\'s key, e.g. "T2_female"')
    loaded: Count = Field(description="sentences read from it")
    evaluated: Count = Field(description="sentences scored")


class TWBiasDetails(Block):
    sentence_sets: dict[str, SentenceSetBlock] = Field(
        description='"<axis>/<the files\' group name>" → the sentence file and its counts',
    )
    prompts: dict[str, str | None] = Field(
        description="prompt type → the user message; null for type 0 (no template)",
    )
    skips: list[SkippedRow] = Field(description="every row skipped, with file, row and reason")


class TWBiasSummary(RunSummary):
    benchmark: Literal["twbias"] = Field("twbias", description='always "twbias"')
    metrics: TWBiasMetrics = Field(
        description="bias ratio and effect size per specification, with every test behind them (PROTOCOLS §1)",
    )
    counts: TWBiasCounts = Field(description="sentences, requests, outliers and skipped rows")
    details: TWBiasDetails = Field(description="the sentence files, the prompts and the skipped rows")

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

    def headline_low_power(self) -> str | None:
        """Which headline numbers rest only on prompt types tested on few pairs (every cell first, then by spec)."""
        specs = {key: spec for axis in (self.metrics.gender, self.metrics.ethnicity) for key, spec in (axis or {}).items()}
        groups = [g for spec in specs.values() for g in (spec, *spec.by_toxicity.values(), *spec.by_category.values())]
        tested = [p for g in groups for p in g.prompts.values() if p.untested is None]
        below = self.metrics.analysis.few_pairs_below
        if tested and all(p.few_pairs for p in tested):
            largest = max(p.n for p in tested)
            return (
                f"Every test of this run rests on few sentence pairs (at most {largest}, under {below}): low power. Its "
                "numbers are computed as the authors' code computes them and flagged \"few pairs\"; none is dropped."
            )
        few = [f"{key}: {spec.few_pairs}" for key, spec in specs.items() if spec.few_pairs]
        if not few:
            return None
        return f"Headline numbers built only from tests on few sentence pairs, shown and flagged, never dropped: {'; '.join(few)}."
