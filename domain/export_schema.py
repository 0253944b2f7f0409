"""The Arrow schema of exported item records: one type per column, whatever the run or benchmark.

``culturebias export`` writes one flat row per item record (``domain/audit.py``). A column's
type never depends on the values of one run: it is declared here, so the tables of any runs
(of one model or several, of one benchmark or several) concatenate. Types are named, not
pyarrow objects (the domain imports no I/O library): ``string``, ``int64``, ``float64``,
``bool``, ``list<string>``, ``list<float64>``, ``list<int64>``.

- ``RUN_COLUMNS``: which run and model a row comes from (every row);
- ``ITEM_COLUMNS``: the record's own fields (every row); lists are Arrow lists;
- ``META_TYPES``: every metadata field a built-in benchmark records (``meta.<field>``), one
  type per name across benchmarks; ``BENCHMARK_META`` says which benchmark has which, and a
  benchmark's export always has all of its columns, so two exports of it share one schema;
- any other ``meta.<field>`` (a plugin's) is a ``string`` (JSON text for a value that is not
  one), every ``score.<name>`` a ``float64``.

A value that cannot take its column's type (``"many"`` in an ``int64`` column) is an error
naming the run, the item and the column, never a silently retyped column.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
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

_BBQ = {
    "sample_id": "string",
    "category": "string",
    "subcategory": "string",
    "template_id": "string",
    "context_condition": "string",
    "question_polarity": "string",
    "context_polarity": "string",
    "label_type": "string",
    "prompt_id": "string",
    "permutation": "int64",
    "mode": "string",
    "options": "list<string>",
    "shown_order": "list<int64>",
    "answer_index": "int64",
    "biased_index": "int64",
    "unknown_index": "int64",
    "chosen_index": "int64",
    "chosen_letter": "string",
    "invalid_reply": "bool",
}
_TWBIAS = {
    "axis": "string",
    "specification": "string",
    "origin": "string",
    "reference": "string",
    "prompt_type": "string",
    "sentence_id": "string",
    "file": "string",
    "row": "int64",
    "toxicity": "int64",
    "categories": "list<string>",
}
_MCBE = {
    "task": "string",
    "bei": "string",
    "category": "string",
    "subtype": "string",
    "file": "string",
    "row": "int64",
    "words": "list<string>",
    "default_sentence": "string",
    "human_score": "float64",
    "skipped": "string",
    "unparseable": "int64",
    "unparseable_replies": "list<string>",
    "explanation": "string",
    "judge_raw": "string",
    "judge_attempts": "string",
    "attempts": "int64",
}
_LIBRA = {
    "kind": "string",
    "category": "string",
    "group": "string",
    "target": "string",
    "anti_stereotype": "string",
    "unrelated": "string",
    "model_type": "string",
    "valid": "bool",
    "stereotype_over_anti": "bool",
    "term": "string",
    "as_written": "string",
    "official_definition": "string",
    "understood": "bool",
    "triplets": "int64",
    "nearest_term": "string",
}
COMMON_META = {"repeat": "int64"}  # which of run.repeats recorded the item (0-based)

BENCHMARK_META: dict[str, dict[str, str]] = {
    "twbias": {**_TWBIAS, **COMMON_META},
    "kobbq": {**_BBQ, **COMMON_META},
    "cbbq": {**_BBQ, **COMMON_META},
    "mcbe": {**_MCBE, **COMMON_META},
    "libra": {**_LIBRA, **COMMON_META},
}


def _one_type_per_name() -> dict[str, str]:
    merged: dict[str, str] = {}
    for benchmark, fields in BENCHMARK_META.items():
        for name, kind in fields.items():
            if merged.setdefault(name, kind) != kind:
                raise AssertionError(f"meta.{name} is {merged[name]} in one benchmark and {kind} in {benchmark}")
    return merged


META_TYPES: dict[str, str] = _one_type_per_name()
UNDECLARED_META = "string"
SCORE_TYPE = "float64"


def benchmark_schema(benchmark: str) -> dict[str, str]:
    """The columns every export of ``benchmark`` has, with their types (a plugin benchmark: run and item columns)."""
    meta = BENCHMARK_META.get(benchmark, COMMON_META)
    return {**RUN_COLUMNS, **ITEM_COLUMNS, **{META_PREFIX + name: kind for name, kind in sorted(meta.items())}}


def column_type(name: str) -> str:
    if name in RUN_COLUMNS:
        return RUN_COLUMNS[name]
    if name in ITEM_COLUMNS:
        return ITEM_COLUMNS[name]
    if name.startswith(SCORE_PREFIX):
        return SCORE_TYPE
    if name.startswith(META_PREFIX):
        return META_TYPES.get(name[len(META_PREFIX) :], UNDECLARED_META)
    raise KeyError(name)


def export_columns(benchmarks: Iterable[str], rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:  # Any: flat record values of any column type
    """The columns of one table of these benchmarks' rows, in order: run, item, scores, metadata; with their types."""
    found: set[str] = set()
    for benchmark in benchmarks:
        found |= set(benchmark_schema(benchmark))
    for row in rows:
        found |= set(row)
    scores = sorted(n for n in found if n.startswith(SCORE_PREFIX))
    meta = sorted(n for n in found if n.startswith(META_PREFIX))
    fixed = [n for n in (*RUN_COLUMNS, *ITEM_COLUMNS)]
    return {name: column_type(name) for name in (*fixed, *scores, *meta)}


@dataclass(frozen=True)
class RunRecords:
    """One run's item records with what names the run on every exported row."""

    run_id: str
    benchmark: str
    model: str | None  # the evaluated model's name; a run that never finished: its model.path
    model_fingerprint: str | None  # ModelIdentity.cache_key(); None for a run that never finished
    records: Sequence[ItemRecord]

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
    columns = export_columns([run.benchmark for run in runs], (row for _, row in raw))
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


def schema_markdown() -> str:
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
    for benchmark, fields in BENCHMARK_META.items():
        lines += ["", f"## {benchmark}", "", "| column | type |", "|---|---|"]
        lines += [f"| `meta.{name}` | `{kind}` |" for name, kind in sorted(fields.items())]
    return "\n".join(lines) + "\n"
