"""The per-item audit trail: what one item of a run was asked, what the model answered, and how it counted.

A run stores one ``ItemRecord`` per item (stage ``items`` of the result store,
keyed by ``item_id``), so a reviewer can see, item by item, the rendered prompt
or the scored texts, the raw answer or the log-likelihoods, the parsed choice,
the item's metadata and its outcome. ``flat_record`` gives the pandas-ready row
(metadata as ``meta.<field>`` columns), ``matches`` the ``--filter`` test.
"""

from __future__ import annotations

import json
import math
from typing import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from culturebias.domain.errors import ConfigError

ITEMS_STAGE = "items"
META_PREFIX = "meta."
# Stored beside a record's fields: [repeat, position in what the service recorded], so a run's records
# come back in the order recorded whatever order the store keeps; not a field of the record.
ORDER_KEY = "_order"

Scalar = str | int | float | bool | None


class ItemRecord(BaseModel):
    """One item of one run, as a reviewer reads it.

    - ``prompt``: the rendered prompt a generating protocol sent (chat template applied);
    - ``texts`` / ``loglikelihoods``: the texts a scoring protocol scored and their
      log-likelihoods (same order; None where a score was invalid);
    - ``answer``: the model's raw answer; ``parsed``: the choice read from it;
    - ``outcome``: how the item counted (``biased``, ``counter_biased``, ``unknown``,
      ``out_of_choice``, ``stereotype_preferred``, ``invalid`` ...); ``correct``: whether
      the answer was the right one, where an item has one; ``scores``: its numbers
      (per-pair perplexities, a judge's score ...);
    - ``metadata``: the item's fields (category, group, condition, template id,
      label type ...), scalars only so that every field becomes one column.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: str
    item_id: str
    prompt: str | None = None
    texts: list[str] = Field(default_factory=list)
    answer: str | None = None
    loglikelihoods: list[float | None] = Field(default_factory=list)
    parsed: str | None = None
    outcome: str | None = None
    correct: bool | None = None
    scores: dict[str, float | None] = Field(default_factory=dict)
    metadata: dict[str, Scalar] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _without_store_order(cls, data: object) -> object:
        if isinstance(data, Mapping) and ORDER_KEY in data:
            return {k: v for k, v in data.items() if k != ORDER_KEY}
        return data

    @field_validator("loglikelihoods")
    @classmethod
    def _finite_or_none(cls, values: list[float | None]) -> list[float | None]:
        # NaN does not survive JSON: an invalid score is stored as None.
        return [None if v is None or not math.isfinite(v) else float(v) for v in values]

    @field_validator("scores")
    @classmethod
    def _finite_scores(cls, values: dict[str, float | None]) -> dict[str, float | None]:
        return {k: (None if v is None or not math.isfinite(v) else float(v)) for k, v in values.items()}


# The columns every export has, in this order; metadata columns follow, sorted.
BASE_COLUMNS: tuple[str, ...] = (
    "benchmark",
    "item_id",
    "prompt",
    "texts",
    "answer",
    "loglikelihoods",
    "parsed",
    "outcome",
    "correct",
)
SCORE_PREFIX = "score."


def flat_record(record: ItemRecord) -> dict[str, Scalar]:
    """One flat row: lists as JSON text, ``score.<name>`` and ``meta.<field>`` columns."""
    row: dict[str, Scalar] = {
        "benchmark": record.benchmark,
        "item_id": record.item_id,
        "prompt": record.prompt,
        "texts": json.dumps(record.texts, ensure_ascii=False) if record.texts else None,
        "answer": record.answer,
        "loglikelihoods": json.dumps(record.loglikelihoods) if record.loglikelihoods else None,
        "parsed": record.parsed,
        "outcome": record.outcome,
        "correct": record.correct,
    }
    for name, score in record.scores.items():
        row[SCORE_PREFIX + name] = score
    for name, value in record.metadata.items():
        row[META_PREFIX + name] = value
    return row


def columns(records: Sequence[ItemRecord]) -> list[str]:
    """Every column the records' flat rows have: the base ones, then scores, then metadata (sorted)."""
    scores = sorted({SCORE_PREFIX + k for r in records for k in r.scores})
    meta = sorted({META_PREFIX + k for r in records for k in r.metadata})
    return [*BASE_COLUMNS, *scores, *meta]


def _field_value(record: ItemRecord, name: str) -> tuple[bool, Scalar]:
    """(known, value) of a filter's field: a base column, ``score.<x>``, ``meta.<x>`` or a bare metadata name."""
    if name in ("benchmark", "item_id", "prompt", "answer", "parsed", "outcome", "correct"):
        return True, getattr(record, name)
    if name.startswith(SCORE_PREFIX):
        key = name[len(SCORE_PREFIX) :]
        return key in record.scores, record.scores.get(key)
    key = name[len(META_PREFIX) :] if name.startswith(META_PREFIX) else name
    return key in record.metadata, record.metadata.get(key)


def _as_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def matches(record: ItemRecord, where: Mapping[str, str]) -> bool:
    """Whether every ``field=value`` of ``where`` holds (values compared as text; ``true``/``false`` for booleans)."""
    for name, wanted in where.items():
        known, value = _field_value(record, name)
        text = wanted if isinstance(wanted, str) else _as_text(wanted)  # the API may pass True, 0, ...
        if isinstance(value, bool):
            text = text.lower()
        if not known or _as_text(value) != text:
            return False
    return True


def parse_filters(specs: Sequence[str]) -> dict[str, str]:
    """``["category=age", "meta.group=x"]`` as a mapping; a spec without ``=`` or a field is a ConfigError."""
    where: dict[str, str] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ConfigError(f"--filter {spec!r}: expected FIELD=VALUE (e.g. outcome=biased or meta.category=age)")
        where[name] = value.strip()
    return where


def metadata(fields: Mapping[str, object]) -> dict[str, Scalar]:
    """An item's fields as scalar metadata: None-valued kept, lists and mappings as JSON text."""
    out: dict[str, Scalar] = {}
    for name, value in fields.items():
        if value is None or isinstance(value, (str, bool, int, float)):
            out[str(name)] = value
        else:
            out[str(name)] = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    return out
