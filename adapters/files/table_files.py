"""Flat tables written to files: a run's item records (``culturebias export``) and expanded items (``culturebias expand``).

Exports are pandas-ready: one flat row per item naming its run (``run_id``,
``benchmark``, ``model``, ``model_fingerprint``), metadata as ``meta.<field>``
columns, numbers in one ``scores`` map, the one column set and types
``domain/export_schema.py`` declares (so tables of any runs concatenate). Parquet needs pyarrow (the
``export`` extra), imported only when a parquet file is written. Every file is
written under a temporary name and renamed into place: a failed write leaves
the previous file, never a half-written one.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from culturebias.domain.export_schema import EXPORT_SCHEMA_VERSION, RunRecords, typed_rows
from culturebias.adapters.install.optional_modules import install_hint
from culturebias.domain.errors import ConfigError

EXPORT_FORMATS = ("csv", "parquet", "jsonl")


def replace_atomically(path: Path, write: Callable[[Path], Any]) -> Any:  # Any: whatever the writer returns
    """``write(temporary)`` then the temporary file renamed to ``path``; returns what ``write`` returned."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        written = write(temporary)
        os.replace(temporary, path)
        return written
    finally:
        temporary.unlink(missing_ok=True)


def _csv(path: Path, columns: Mapping[str, str], rows: list[dict[str, Any]]) -> None:  # Any: flat rows of JSON values
    def cell(value: Any) -> Any:  # Any: a JSON value; CSV has no lists or maps: JSON text, an empty one an empty cell
        if isinstance(value, (list, dict)):
            return json.dumps(value, ensure_ascii=False) if value else None
        return value

    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), extrasaction="raise")
        writer.writeheader()
        writer.writerows({name: cell(value) for name, value in row.items()} for row in rows)


def _jsonl(path: Path, columns: Mapping[str, str], rows: list[dict[str, Any]]) -> None:  # Any: flat rows of JSON values
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps({name: row.get(name) for name in columns}, ensure_ascii=False) + "\n")


def _arrow_type(pa: Any, kind: str) -> Any:  # Any: the pyarrow module and its type objects
    if kind.startswith("list<"):
        return pa.list_(_arrow_type(pa, kind[5:-1]))
    if kind.startswith("map<string,"):
        return pa.map_(pa.string(), _arrow_type(pa, kind[11:-1]))
    return {"bool": pa.bool_(), "int64": pa.int64(), "float64": pa.float64(), "string": pa.string()}[kind]


def _parquet(path: Path, columns: Mapping[str, str], rows: list[dict[str, Any]]) -> None:  # Any: flat rows of JSON values
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError(f"parquet export needs pyarrow: {install_hint('export')}") from None
    schema = pa.schema([(name, _arrow_type(pa, kind)) for name, kind in columns.items()],
                       metadata={"culturebias.export_schema": EXPORT_SCHEMA_VERSION})
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


WRITERS = {"csv": _csv, "jsonl": _jsonl, "parquet": _parquet}


class ItemTables:
    """``ports.exports.ItemTableWriter``: runs' item records as one csv, parquet or jsonl table."""

    formats: tuple[str, ...] = EXPORT_FORMATS

    def write(self, runs: Sequence[RunRecords], out: Path, format: str) -> int:
        if format not in WRITERS:
            raise ConfigError(f"unknown export format {format!r} (choose one of: {', '.join(EXPORT_FORMATS)})")
        writer = WRITERS[format]
        columns, rows = typed_rows(runs)
        replace_atomically(out, lambda path: writer(path, columns, rows))
        return len(rows)


class JsonlRows:
    """``ports.template_files.RowsWriter``: rows as one JSON object per line in ``path``."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def __call__(self, rows: Iterable[Mapping[str, Any]]) -> int:  # Any: flat rows of JSON values
        def write(temporary: Path) -> int:
            count = 0
            with temporary.open("w", encoding="utf-8") as handle:
                for row in rows:
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                    count += 1
            return count

        return replace_atomically(self.path, write)
