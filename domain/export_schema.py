"""The Arrow schema of exported item records: one column set, one type per column, whatever the run or benchmark.

``culturebias export`` writes one flat row per item record (``domain/audit.py``). The columns never
depend on the run or the benchmark: every export has the same columns in the same order, so
separately written tables (of one model or several, of one benchmark or several) concatenate
(``pyarrow.concat_tables``, CSVs by header). Types are named, not pyarrow objects (the domain
imports no I/O library): ``string``, ``int64``, ``float64``, ``bool``, ``list<string>``,
``list<float64>``, ``list<int64>``, ``map<string,float64>``.

- ``RUN_COLUMNS``: which run and model a row comes from;
- ``ITEM_COLUMNS``: the record's own fields; lists are Arrow lists, ``scores`` (the item's numbers:
  per-pair perplexities, a judge's score, per-word likelihoods) a map of name to number;
- ``meta.<field>``: the metadata fields every installed benchmark declares, in its own domain
  package, reached through its descriptor (``export_meta``), the union of them all
  (``shared_meta``), one type per name (``one_type_per_name``); a field a run's benchmark does not
  record is null in its rows;
- ``meta.other``: any metadata field no benchmark declares (a plugin's), as one JSON object text.

A value that cannot take its column's type (``"many"`` in an ``int64`` column) is an error
naming the run, the item and the column, never a silently retyped column.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from culturebias.domain.audit import META_PREFIX, SCORE_PREFIX, ItemRecord, flat_record
from culturebias.domain.errors import DataError

RUN_COLUMNS: dict[str, str] = {
    "run_id": "string",
    "benchmark": "string",
    "model": "string",  # the evaluated model's name (its identity's; a run that never finished: model.path)
    "model_fingerprint": "string",  # ModelIdentity.cache_key(): backend, model, revision, tokenizer, dtype, weights
}
ITEM_COLUMNS: dict[str, str] = {
    "item_id": "string",
    "prompt": "string",
    "texts": "list<string>",
    "answer": "string",
    "loglikelihoods": "list<float64>",
    "parsed": "string",
    "outcome": "string",
    "correct": "bool",
    "scores": "map<string,float64>",
}
# Bumped when the column set or a column's type changes; Parquet files carry it (schema metadata).
EXPORT_SCHEMA_VERSION = "2"
OTHER_META = "other"  # meta.other: the metadata fields no installed benchmark declares, as JSON object text

COMMON_META = {"repeat": "int64"}  # which of run.repeats recorded the item (0-based)



def one_type_per_name(declared: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """Every declared ``meta.<field>`` with its one type; ValueError naming both benchmarks when two disagree."""
    merged: dict[str, str] = {}
    owner: dict[str, str] = {}
    for benchmark, fields in declared.items():
        for name, kind in fields.items():
            if merged.setdefault(name, kind) != kind:
                raise ValueError(f"meta.{name} is {merged[name]} in {owner[name]} and {kind} in {benchmark}: one type per column")
            owner.setdefault(name, benchmark)
    return merged


SCORE_TYPE = "float64"


def shared_meta(declared: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """The ``meta.<field>`` columns of every export: each benchmark's declared fields (``declared``: benchmark →
    its fields), ``COMMON_META`` and ``meta.other``, sorted; ValueError where two benchmarks type a name apart."""
    merged = one_type_per_name({**declared, "culturebias": {**COMMON_META, OTHER_META: "string"}})
    return {name: merged[name] for name in sorted(merged)}


def benchmark_schema(meta: Mapping[str, str]) -> dict[str, str]:
    """Every column of an export with these metadata fields (``shared_meta``), with their types, in order."""
    return {**RUN_COLUMNS, **ITEM_COLUMNS, **{META_PREFIX + name: kind for name, kind in sorted(meta.items())}}


def export_columns(declared: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """The columns of every export (``declared``: every installed benchmark → its metadata fields), in order:
    run, item, metadata; with their types."""
    return benchmark_schema(shared_meta(declared))


@dataclass(frozen=True)
class RunRecords:
    """One run's item records with what names the run on every exported row."""

    run_id: str
    benchmark: str
    model: str | None  # the evaluated model's name; a run that never finished: its model.path
    model_fingerprint: str | None  # ModelIdentity.cache_key(); None for a run that never finished
    records: Sequence[ItemRecord]
    # The benchmark's declared metadata columns (its descriptor's ``export_meta_columns()``).
    meta_columns: Mapping[str, str] = field(default_factory=lambda: dict(COMMON_META))

    def rows(self) -> list[dict[str, Any]]:  # Any: flat record values of any column type
        """Flat rows naming the run: lists as lists, ``scores`` as a mapping, ``meta.<field>`` per metadata field."""
        names = {"run_id": self.run_id, "model": self.model, "model_fingerprint": self.model_fingerprint}
        out = []
        for r in self.records:
            row = {k: v for k, v in flat_record(r).items() if not k.startswith(SCORE_PREFIX)}
            out.append({**names, **row, "texts": list(r.texts), "loglikelihoods": list(r.loglikelihoods), "scores": dict(r.scores)})
        return out


def typed_rows(runs: Sequence[RunRecords]) -> tuple[dict[str, str], list[dict[str, Any]]]:  # Any: flat record values of any column type
    """The columns of every export (``export_columns`` of the runs' declared fields) and every row, each value of
    its column's type; metadata no benchmark declares goes to ``meta.other``."""
    declared = {run.benchmark: run.meta_columns for run in runs}
    try:
        columns = export_columns(declared)
    except ValueError as clash:
        raise DataError(str(clash), file=", ".join(run.run_id for run in runs)) from clash
    rows = []
    for run in runs:
        for row in run.rows():
            where = f"run {run.run_id}, item {row.get('item_id')}"
            other = {k[len(META_PREFIX) :]: v for k, v in row.items() if k.startswith(META_PREFIX) and k not in columns}
            if other:
                row[META_PREFIX + OTHER_META] = json.dumps(other, ensure_ascii=False, sort_keys=True)
            rows.append({name: coerce(row.get(name), kind, f"{where}, column {name}") for name, kind in columns.items()})
    return columns, rows


def _fail(value: Any, kind: str, where: str) -> DataError:  # Any: a value of any column type
    return DataError(f"{value!r} is not a {kind}", file=where)


def coerce(value: Any, kind: str, where: str) -> Any:  # Any: a value of any column type, and the value as its column's type
    """``value`` as a value of the column type ``kind`` (None stays None); DataError naming ``where`` otherwise."""
    if value is None:
        return None
    if kind.startswith("map<string,"):
        if not isinstance(value, Mapping):
            raise _fail(value, kind, where)
        return {str(name): coerce(number, kind[11:-1], f"{where}[{name}]") for name, number in value.items()}
    if kind.startswith("list<"):
        items = json.loads(value) if isinstance(value, str) else value  # metadata keeps lists as JSON text
        if not isinstance(items, (list, tuple)):
            raise _fail(value, kind, where)
        return [coerce(item, kind[5:-1], where) for item in items]
    if kind == "string":
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    if kind == "bool":
        if isinstance(value, bool):
            return value
        raise _fail(value, kind, where)
    if kind == "int64":
        if isinstance(value, bool):
            raise _fail(value, kind, where)
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        raise _fail(value, kind, where)
    if kind == "float64":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value) if math.isfinite(value) else None
        raise _fail(value, kind, where)
    raise ValueError(f"unknown column type {kind!r}")


def schema_markdown(declared: Mapping[str, Mapping[str, str]]) -> str:
    """docs/EXPORT_SCHEMA.md: the one column set of every export and its Arrow types (a test keeps it in step)."""
    columns = export_columns(declared)

    def recorded_by(name: str) -> str:
        if not name.startswith(META_PREFIX):
            return "every benchmark"
        field = name[len(META_PREFIX) :]
        if field == OTHER_META:
            return "metadata no installed benchmark declares (a plugin's), as one JSON object"
        if field in COMMON_META:
            return "every benchmark"
        return ", ".join(b for b, fields in declared.items() if field in fields)

    lines = [
        "# The Arrow schema of `culturebias export`",
        "",
        f"Export schema version {EXPORT_SCHEMA_VERSION}. Generated from `culturebias.domain.export_schema`",
        "(`schema_markdown()`); a test fails when they differ.",
        "",
        "Every `csv`, `parquet` and `jsonl` export has all of these columns, in this order, whatever its runs and",
        "benchmarks: separately written tables concatenate (`pyarrow.concat_tables`, CSV files by their one",
        "header). A `meta.<field>` the row's benchmark does not record is null. `scores` holds the item's numbers",
        "by name (`ppl_origin`, `ppl_reference`, `score`, `nll.<word>`, `mean_logprob.<i>`, ...): an Arrow",
        "`map<string, float64>` in Parquet, a JSON object in JSONL and (as text) in CSV. Lists are Arrow lists;",
        "CSV, which has none, writes them as JSON text. Parquet files carry the version as schema metadata",
        f"(`culturebias.export_schema` = `{EXPORT_SCHEMA_VERSION}`). With a plugin benchmark installed, the metadata",
        "fields it declares are columns too (sorted among these).",
        "",
        "| column | type | recorded by |",
        "|---|---|---|",
        *(f"| `{name}` | `{kind}` | {recorded_by(name)} |" for name, kind in columns.items()),
    ]
    return "\n".join(lines) + "\n"
