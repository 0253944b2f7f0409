"""Flat tables written to files: a run's item records (``culturebias export``) and expanded items (``culturebias expand``).

Exports are pandas-ready: one flat row per item, metadata as ``meta.<field>``
columns, numbers as ``score.<name>`` columns. Parquet needs pyarrow (the
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

from culturebias.domain.audit import BASE_COLUMNS, ItemRecord, columns, flat_record
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


def _csv(path: Path, names: list[str], rows: list[dict[str, Any]]) -> None:  # Any: flat rows of JSON values
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=names, extrasaction="raise")
        writer.writeheader()
        writer.writerows(rows)


def _jsonl(path: Path, names: list[str], rows: list[dict[str, Any]]) -> None:  # Any: flat rows of JSON values
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps({name: row.get(name) for name in names}, ensure_ascii=False) + "\n")


def _column_type(values: list[Any]) -> str:  # Any: flat rows of JSON values
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "bool"
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "int"
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return "float"
    return "string"


def _parquet(path: Path, names: list[str], rows: list[dict[str, Any]]) -> None:  # Any: flat rows of JSON values
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError("parquet export needs pyarrow: pip install 'culturebias[export]'") from None
    arrow_types = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "string": pa.string()}
    arrays = []
    for name in names:
        values = [row.get(name) for row in rows]
        kind = _column_type(values)
        if kind == "string":  # a column mixing kinds (a metadata field that is a number in some items) is text
            values = [None if v is None else v if isinstance(v, str) else json.dumps(v) for v in values]
        elif kind == "float":
            values = [None if v is None else float(v) for v in values]
        arrays.append(pa.array(values, type=arrow_types[kind]))
    pq.write_table(pa.Table.from_arrays(arrays, names=names), path)


WRITERS = {"csv": _csv, "jsonl": _jsonl, "parquet": _parquet}


class ItemTables:
    """``ports.exports.ItemTableWriter``: item records as csv, parquet or jsonl files."""

    formats: tuple[str, ...] = EXPORT_FORMATS

    def write(self, records: Sequence[ItemRecord], out: Path, format: str) -> int:
        if format not in WRITERS:
            raise ConfigError(f"unknown export format {format!r} (choose one of: {', '.join(EXPORT_FORMATS)})")
        writer = WRITERS[format]
        names = columns(records) if records else list(BASE_COLUMNS)
        rows = [flat_record(r) for r in records]
        replace_atomically(out, lambda path: writer(path, names, rows))
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
