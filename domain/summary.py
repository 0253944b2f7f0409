"""Typed run results: one common envelope, one summary model per benchmark.

A protocol service returns a ``ProtocolOutcome`` whose ``metrics``, ``counts``
and ``details`` are that benchmark's own pydantic models; the run orchestrator
wraps them in the benchmark's ``RunSummary`` subclass; ``summary.json`` is its
JSON, and reports read its typed fields. ``load_summary`` reads a file back,
checking the schema version.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar, Generic, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from culturebias.domain.chat_template_use import ChatTemplateUse
from culturebias.domain.errors import SchemaVersionError
from culturebias.domain.identity import ModelIdentity, ScoreProvenance
from culturebias.domain.repeats import RepeatsBlock
from culturebias.domain.sequential_block import SequentialBlock
from culturebias.domain.stratified import SampleBlock
from culturebias.domain.validity import ValidityBlock

# 2.0: summaries are typed models (the JSON layout of 1.x is unchanged, so 1.x files load).
# 2.1: the envelope records a limited run (``limit``); 2.0 files load with ``limit`` null.
# 2.2: optional blocks added (bootstrap ``intervals``, ``repeats``, TWBias ``analysis.t_sign`` and
#      ``replace_aggregate``, KoBBQ ``tests``, CBBQ ``answering``/``reasoning``/``by_group_topic``, McBE
#      ``prompt_set``/``pc_text``/``reply_stops``, LIBRA ``stereoset``/``comparison``); LIBRA's ``icat`` is
#      ``icat_local``. Meanings that changed (README "Changelog"): TWBias t has the authors' sign (a 2.1 file
#      has no ``t_sign``: replace minus origin); CBBQ acc_amb counts the underivable items. 2.x files load;
#      runs of different schema versions are not compared.
# 2.3: every summary says whether its headline can be read (``not_measured``: null, or
#      why not, e.g. every answer out of choice); TWBias tests a prompt type only with ``protocol.min_pairs`` (10)
#      pairs after outliers (``untested`` says why not; ``analysis.min_pairs``); McBE's BS whose every rating is
#      unparseable and the overall with a task unmeasured are null; LIBRA's local words record the nearest
#      glossary definition (``nearest_term``). Every JSON Schema property has a description. 2.x files load
#      (``not_measured`` is computed for them when read).
#      Also added with defaults: ``sample`` (a --sample run), McBE ``repeat_means``, KoBBQ ``evaluator`` and its extra
#      metrics (``acc_overall``, ``bias_score_*``, ``inconsistency``, ``n_version_d*``, ``tests.reference_scores``),
#      CBBQ ``wording``; CBBQ overall is the category mean and TWBias category rows are exploded by default.
# 2.5: ``validity``: each headline's validity rules (PROTOCOLS §6) and their results on the run; a headline guarded
#      by a failed rule keeps its value but reads "not measured" everywhere (``domain/validity.py``). 2.x files load
#      without the block ("not assessed": nothing is blocked). Every options model accepts ``protocol.validity``.
# 2.6: added with defaults (issue 36): TWBias ``few_pairs`` flags and ``analysis.few_pairs_below`` (``min_pairs``
#      null by default); CBBQ ``metrics.prompt_set``/``prompt_source``, ``counts.table4`` and
#      ``counts.explained_answers``; KoBBQ Tukey across label types on accuracy (``acc_amb``/``acc_dis``); LIBRA
#      ``metrics.reference_rows`` (Table 1's theoretical LMs). ``config.store.path`` is recorded absolute.
SUMMARY_SCHEMA_VERSION = "2.6"


def _finite_or_none(value: object) -> object:
    """NaN and infinities are "undefined" (a t-test on constant data has no p): stored as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, (str, bytes)):  # numpy scalars
        return _finite_or_none(value.item())
    return value


# A number that may be undefined; every float of a summary is one.
Number = Annotated[float | None, BeforeValidator(_finite_or_none)]
Count = Annotated[int, BeforeValidator(_finite_or_none)]


class Block(BaseModel):
    """Base of every typed part of a summary: unknown keys are an error, JSON numbers may be null."""

    model_config = ConfigDict(extra="forbid", frozen=False, populate_by_name=True)


class OmittedWhenNone(Block):
    """A block whose listed optional keys are absent from summary.json when None (the layout before typing)."""

    omitted_when_none: ClassVar[tuple[str, ...]] = ()

    # No return annotation: with one, the JSON Schema of the block would be that annotation's, not its fields'.
    @model_serializer(mode="wrap")
    def _omit_none(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]  # return unannotated on purpose (above)
        data = handler(self)
        for key in self.omitted_when_none:
            if key in data and data[key] is None:
                del data[key]
        return data


class ModelBlock(Block):
    """Identity of every model port a run built, with the numeric provenance of its scores."""

    scorer: ModelIdentity | None = Field(
        None,
        description="the model that scored continuations (log-likelihoods), where the run built one",
    )
    scorer_provenance: ScoreProvenance | None = Field(
        None,
        description="the numeric settings of its scores (dtype, device, batch size, boundary rule)",
    )
    scorer_probe: dict[str, str] | None = Field(
        None,
        description="a served model's truth probe: what it measured, which boundary source it chose and why",
    )
    pseudo_scorer: ModelIdentity | None = Field(
        None,
        description="the masked LM that gave pseudo-log-likelihoods, where the run built one",
    )
    pseudo_scorer_provenance: ScoreProvenance | None = Field(None, description="the numeric settings of its scores")
    generator: ModelIdentity | None = Field(
        None,
        description="the model that generated text, where the run built one",
    )
    judge: ModelIdentity | None = Field(
        None,
        description="the judge model (McBE BA, LIBRA's P2 verification), where the run built one",
    )
    templater: ModelIdentity | None = Field(
        None,
        description="the chat template's owner, where the run rendered templates",
    )
    chat_template: ChatTemplateUse | None = Field(
        None,
        description=(
            "where the chat template was applied (here, or by a server where it is not visible): the templater's "
            "own account"
        ),
    )

    # No return annotation: with one, the JSON Schema of the block would be that annotation's, not its fields'.
    @model_serializer(mode="wrap")
    def _only_the_ports_built(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]  # return unannotated on purpose (above)
        return {key: value for key, value in handler(self).items() if value is not None}

    def roles(self) -> dict[str, ModelIdentity]:
        return {
            role: identity
            for role in ("scorer", "pseudo_scorer", "generator", "judge", "templater")
            if (identity := getattr(self, role)) is not None
        }

    def provenance(self, role: str) -> ScoreProvenance | None:
        return getattr(self, f"{role}_provenance", None)


class DataBlock(Block):
    source: str = Field(description="the data the run read: a folder, a file or the bundled data")
    fingerprint: str = Field(description="a hash of that data: runs on different data are not compared unless asked")


class RunLimit(Block):
    """A run cut short by ``--limit N`` (``protocol.limit``): not comparable to a full run.

    ``meaning`` says what N counted in this benchmark (its options model's ``limit`` description).
    """

    n: int = Field(description="the N of --limit N (protocol.limit)")
    meaning: str = Field(description="what N counted in this benchmark (its options' limit description)")


def run_limit(options: object) -> RunLimit | None:
    """The limit a benchmark's options set, with its meaning; None for a full run or options without a limit."""
    n = getattr(options, "limit", None)
    if n is None:
        return None
    field = type(options).model_fields.get("limit") if isinstance(options, BaseModel) else None
    return RunLimit(n=n, meaning=(field.description if field is not None and field.description else "the first N items"))


MetricsT = TypeVar("MetricsT", bound=BaseModel)
CountsT = TypeVar("CountsT", bound=BaseModel)
DetailsT = TypeVar("DetailsT", bound=BaseModel)


class ProtocolOutcome(BaseModel, Generic[MetricsT, CountsT, DetailsT]):
    """What a protocol service hands back to the run orchestrator (typed per benchmark)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    metrics: MetricsT
    counts: CountsT
    notes: list[str] = Field(default_factory=list)
    details: DetailsT
    validity: ValidityBlock | None = None  # the benchmark's validity rules on this run (PROTOCOLS §6)
    # What the service ran on: the limit its options set (``run_limit``), the sample it drew (``protocol.sample``).
    # Returned here, not kept on the service (services are stateless), for the summary's envelope and a plan.
    limit: RunLimit | None = None
    drawn_sample: SampleBlock | None = None


class RunSummary(Block):
    """The common envelope of every benchmark's summary.

    Subclasses fix ``benchmark`` and type ``metrics``, ``counts`` and ``details``.
    """

    schema_version: str = Field(
        SUMMARY_SCHEMA_VERSION,
        description="the summary schema this file follows (major.minor)",
    )
    benchmark: str = Field(description="the benchmark that ran")
    run_id: str = Field(description="the run's id, as in the result store")
    created_at: str = Field(description="when the run started (UTC, ISO 8601)")
    finished_at: str = Field(description="when it finished (UTC, ISO 8601)")
    culturebias_version: str = Field(description="the culturebias version that ran it")
    model: ModelBlock = Field(
        default_factory=ModelBlock,
        description="the identity of every model port the run built, with the provenance of its scores",
    )
    data: DataBlock = Field(description="the data the run read and its fingerprint")
    config: dict[str, Any] = Field(  # Any: TOML/JSON values (the settings as JSON)
        description="the effective configuration, credentials redacted (the settings as JSON)",
    )
    config_fingerprint: str = Field(description="a hash of the settings that change numbers (what --resume compares)")
    limit: RunLimit | None = Field(
        None,
        description="set when the run was limited (--limit N): its numbers are not comparable to a full run's",
    )
    sample: SampleBlock | None = Field(
        None,
        description="set when the run evaluated a seeded stratified sample (--sample N): n of population items, per stratum",
    )
    sequential: SequentialBlock | None = Field(
        None,
        description="set on the summary.json of a sequential check (check --sequential): its rounds, items used, "
        "stopped_early",
    )
    repeats: RepeatsBlock | None = Field(
        None,
        description="set when the benchmark ran run.repeats > 1 times: each repeat's headline, mean and std",
    )
    not_measured: str | None = Field(
        None,
        description="why the run's headline numbers cannot be read (every answer out of choice, every rating "
        "unparseable, too few pairs to test, no valid triplet); they are then null and comparisons and reports show "
        "the run as not measured. Null when the headline can be read",
    )
    validity: ValidityBlock | None = Field(
        None,
        description="the validity rules of the headlines (PROTOCOLS §6) and their results: a headline guarded by a "
        "failed rule keeps its value here but reads 'not measured' in reports, comparisons, leaderboards, exports and "
        "checks. Null in summaries before 2.5 (not assessed)",
    )
    metrics: SerializeAsAny[BaseModel] = Field(description="the benchmark's metrics (its own typed block)")
    counts: SerializeAsAny[BaseModel] = Field(
        description="the benchmark's counts of items, invalid, out-of-choice and skipped answers",
    )
    notes: list[str] = Field(default_factory=list, description="what a reader should know about this run, in words")
    details: SerializeAsAny[BaseModel] = Field(description="per-item details (the benchmark's own typed block)")

    def headline_unreadable(self) -> str | None:
        """Why this run's headline numbers cannot be read, from its metrics and counts; None when they can.

        Each benchmark's summary says it for its own headline (PROTOCOLS §5: a number that cannot be read is
        null, with the reason, never a score).
        """
        return None

    def headline_low_power(self) -> str | None:
        """A sentence when the headline numbers are computed only from cells flagged as resting on few units (TWBias:
        prompt types tested on few sentence pairs): shown and flagged, never dropped; None otherwise."""
        return None

    @model_validator(mode="after")
    def _says_whether_measured(self) -> "RunSummary":
        if self.not_measured is None:
            self.not_measured = self.headline_unreadable()
        return self

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)

    def as_dict(self) -> dict[str, Any]:  # JSON boundary
        """The JSON object ``summary.json`` holds."""
        return self.model_dump(mode="json")


def check_schema_version(found: object, where: str) -> None:
    """Same major version: loads (older minors gain defaults). Another major: fails naming both."""
    supported = SUMMARY_SCHEMA_VERSION
    if not isinstance(found, str) or not found.split(".")[0].isdigit():
        raise SchemaVersionError(f"{where}: schema_version {found!r} is not a version; this culturebias reads {supported}")
    found_major, ours = int(found.split(".")[0]), int(supported.split(".")[0])
    # 1.x files have the layout of 2.0 (2.0 typed it), so they load as they are.
    if found_major == 1 or found_major == ours:
        return
    if found_major > ours:
        raise SchemaVersionError(
            f"{where}: schema_version {found} is newer than this culturebias reads ({supported}); upgrade culturebias"
        )
    raise SchemaVersionError(f"{where}: schema_version {found} is older than this culturebias reads ({supported})")


SummaryT = TypeVar("SummaryT", bound=RunSummary)


def parse_summary(model: type[SummaryT], payload: dict[str, Any], where: str) -> SummaryT:  # JSON boundary
    """A summary object from its JSON object, with the version checked and errors naming the field."""
    from culturebias.domain.errors import DataError

    check_schema_version(payload.get("schema_version"), where)
    try:
        return model.model_validate(payload)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise DataError(f"not a valid {model.__name__}: {first['msg']}", file=where, field=field) from None
