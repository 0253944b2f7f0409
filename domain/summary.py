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
)

from culturebias.domain.chat_template_use import ChatTemplateUse
from culturebias.domain.errors import SchemaVersionError
from culturebias.domain.identity import ModelIdentity, ScoreProvenance
from culturebias.domain.repeats import RepeatsBlock
from culturebias.domain.stratified import SampleBlock

# 2.0: summaries are typed models (the JSON layout of 1.x is unchanged, so 1.x files load).
# 2.1: the envelope records a limited run (``limit``); 2.0 files load with ``limit`` null.
# 2.2: optional blocks added (bootstrap ``intervals``, ``repeats``, TWBias ``analysis.t_sign`` and
#      ``replace_aggregate``, KoBBQ ``tests``, CBBQ ``answering``/``reasoning``/``by_group_topic``, McBE
#      ``prompt_set``/``pc_text``/``reply_stops``, LIBRA ``stereoset``/``comparison``); LIBRA's ``icat`` is
#      ``icat_local``. Meanings that changed (README "Changelog"): TWBias t has the authors' sign (a 2.1 file
#      has no ``t_sign``: replace minus origin); CBBQ acc_amb counts the underivable items. 2.x files load;
#      runs of different schema versions are not compared.
SUMMARY_SCHEMA_VERSION = "2.2"


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

    scorer: ModelIdentity | None = None
    scorer_provenance: ScoreProvenance | None = None
    # A served model's truth probe: what it measured, which boundary source it chose and why.
    scorer_probe: dict[str, str] | None = None
    pseudo_scorer: ModelIdentity | None = None
    pseudo_scorer_provenance: ScoreProvenance | None = None
    generator: ModelIdentity | None = None
    judge: ModelIdentity | None = None
    templater: ModelIdentity | None = None
    # Where the chat template was applied (rendered here, or by a server where it is not visible): the
    # templater's own account, so a report can say what differs between backends running one command.
    chat_template: ChatTemplateUse | None = None

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
    source: str
    fingerprint: str


class RunLimit(Block):
    """A run cut short by ``--limit N`` (``protocol.limit``): not comparable to a full run.

    ``meaning`` says what N counted in this benchmark (its options model's ``limit`` description).
    """

    n: int
    meaning: str


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


class RunSummary(Block):
    """The common envelope of every benchmark's summary.

    Subclasses fix ``benchmark`` and type ``metrics``, ``counts`` and ``details``.
    """

    schema_version: str = SUMMARY_SCHEMA_VERSION
    benchmark: str
    run_id: str
    created_at: str
    finished_at: str
    culturebias_version: str
    model: ModelBlock = Field(default_factory=ModelBlock)
    data: DataBlock
    # The effective configuration, secrets redacted (bootstrap's Settings as JSON).
    config: dict[str, Any]  # JSON boundary: the settings as JSON
    config_fingerprint: str
    # Set when the run was limited (--limit N): its numbers are not comparable to a full run's.
    limit: RunLimit | None = None
    # Set when the run evaluated a seeded stratified sample (--sample N): n of population items, per stratum.
    sample: SampleBlock | None = None
    # Set when the run was executed run.repeats > 1 times: each repeat's headline, mean ± std.
    repeats: RepeatsBlock | None = None
    metrics: SerializeAsAny[BaseModel]
    counts: SerializeAsAny[BaseModel]
    notes: list[str] = Field(default_factory=list)
    details: SerializeAsAny[BaseModel]

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
