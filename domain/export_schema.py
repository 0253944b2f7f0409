"""The Arrow schema of exported item records: one type per column, whatever the run or benchmark.

``culturebias export`` writes one flat row per item record (``domain/audit.py``). A column's
type never depends on the values of one run: it is declared here, so the tables of any runs
(of one model or several, of one benchmark or several) concatenate. Types are named, not
pyarrow objects (the domain imports no I/O library): ``string``, ``int64``, ``float64``,
``bool``, ``list<string>``, ``list<float64>``, ``list<int64>``.

- ``RUN_COLUMNS``: which run and model a row comes from (every row);
- ``ITEM_COLUMNS``: the record's own fields (every row); lists are Arrow lists;
- each benchmark declares the metadata fields it records (``meta.<field>``) in its own domain
  package, reached through its descriptor (``export_meta``); one type per name across the
  benchmarks of a table (``one_type_per_name``), and a benchmark's export always has all of its
  columns, so two exports of it share one schema;
- any other ``meta.<field>`` (a plugin's) is a ``string`` (JSON text for a value that is not
  one), every ``score.<name>`` a ``float64``.

A value that cannot take its column's type (``"many"`` in an ``int64`` column) is an error
naming the run, the item and the column, never a silently retyped column.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
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
}

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


UNDECLARED_META = "string"
SCORE_TYPE = "float64"


def benchmark_schema(meta: Mapping[str, str]) -> dict[str, str]:
    """The columns every export of a benchmark has, with their types: run, item and its declared metadata columns
    (its descriptor's ``export_meta_columns()``; a plugin that declares none: ``COMMON_META``)."""
    return {**RUN_COLUMNS, **ITEM_COLUMNS, **{META_PREFIX + name: kind for name, kind in sorted(meta.items())}}


def column_type(name: str, meta_types: Mapping[str, str]) -> str:
    if name in RUN_COLUMNS:
        return RUN_COLUMNS[name]
    if name in ITEM_COLUMNS:
        return ITEM_COLUMNS[name]
    if name.startswith(SCORE_PREFIX):
        return SCORE_TYPE
    if name.startswith(META_PREFIX):
        return meta_types.get(name[len(META_PREFIX) :], UNDECLARED_META)
    raise KeyError(name)


def export_columns(declared: Mapping[str, Mapping[str, str]], rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:  # Any: flat record values of any column type
    """The columns of one table of these benchmarks' rows (``declared``: benchmark → its metadata columns), in order:
    run, item, scores, metadata; with their types."""
    meta_types = one_type_per_name(declared)
    found: set[str] = set()
    for fields in declared.values():
        found |= set(benchmark_schema(fields))
    for row in rows:
        found |= set(row)
    scores = sorted(n for n in found if n.startswith(SCORE_PREFIX))
    meta = sorted(n for n in found if n.startswith(META_PREFIX))
    fixed = [n for n in (*RUN_COLUMNS, *ITEM_COLUMNS)]
    return {name: column_type(name, meta_types) for name in (*fixed, *scores, *meta)}


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
        """Flat rows naming the run; ``texts`` and ``loglikelihoods`` as lists (the item columns' Arrow lists)."""
        names = {"run_id": self.run_id, "model": self.model, "model_fingerprint": self.model_fingerprint}
        return [
            {**names, **flat_record(r), "texts": list(r.texts), "loglikelihoods": list(r.loglikelihoods)}
            for r in self.records
        ]


def typed_rows(runs: Sequence[RunRecords]) -> tuple[dict[str, str], list[dict[str, Any]]]:  # Any: flat record values of any column type
    """The columns of one table of these runs (``export_columns``) and every row, each value of its column's type."""
    raw = [(run.run_id, row) for run in runs for row in run.rows()]
    declared = {run.benchmark: run.meta_columns for run in runs}
    try:
        columns = export_columns(declared, (row for _, row in raw))
    except ValueError as clash:
        raise DataError(str(clash), file=", ".join(run.run_id for run in runs)) from clash
    rows = []
    for run_id, row in raw:
        where = f"run {run_id}, item {row.get('item_id')}"
        rows.append({name: coerce(row.get(name), kind, f"{where}, column {name}") for name, kind in columns.items()})
    return columns, rows


def _fail(value: Any, kind: str, where: str) -> DataError:  # Any: a value of any column type
    return DataError(f"{value!r} is not a {kind}", file=where)


def coerce(value: Any, kind: str, where: str) -> Any:  # Any: a value of any column type, and the value as its column's type
    """``value`` as a value of the column type ``kind`` (None stays None); DataError naming ``where`` otherwise."""
    if value is None:
        return None
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
    """docs/EXPORT_SCHEMA.md: the columns of every benchmark's export and their Arrow types (a test keeps it in step)."""
    lines = [
        "# The Arrow schema of `culturebias export`",
        "",
        "Generated from `culturebias.domain.export_schema` (`schema_markdown()`); a test fails when they differ.",
        "Every export of a benchmark has all of its columns, in this order, whatever its runs' values; a table of",
        "several benchmarks has the union (a column another benchmark lacks is null there). Any other",
        "`meta.<field>` (a plugin's) is `string`, JSON text for a value that is not one; every `score.<name>`",
        "(per-item numbers such as `score.ppl_origin`, `score.similarity`) is `float64`. Lists are Arrow lists;",
        "CSV, which has none, writes them as JSON text.",
        "",
        "Run and item columns, in every export:",
        "",
        "| column | type |",
        "|---|---|",
        *(f"| `{name}` | `{kind}` |" for name, kind in {**RUN_COLUMNS, **ITEM_COLUMNS}.items()),
    ]
    for benchmark, fields in declared.items():
        lines += ["", f"## {benchmark}", "", "| column | type |", "|---|---|"]
        lines += [f"| `meta.{name}` | `{kind}` |" for name, kind in sorted(fields.items())]
    return "\n".join(lines) + "\n"
