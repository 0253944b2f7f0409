"""``ports.review_files.ReviewFiles``: CBBQ review files as CSV (UTF-8, header row) or JSONL (one object a line).

The format follows the file's suffix (``.csv``, ``.jsonl``; anything else is a
``ConfigError``). Writes go through a temporary file renamed into place.
Rows are records (a CSV's header is row 1, an explanation's line breaks stay in its row).
A CSV row or JSONL line that cannot be read is a ``DataError`` naming file and row.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Mapping, Sequence

from culturebias.adapters.files.table_files import replace_atomically
from culturebias.domain.errors import ConfigError, DataError

SUFFIXES = (".csv", ".jsonl")


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ConfigError(f"{path}: a review file is .csv or .jsonl, not {suffix or 'a file without a suffix'!r}")
    return suffix[1:]


class ReviewFileIO:
    def write(self, path: Path, columns: Sequence[str], rows: Sequence[Mapping[str, str]]) -> int:
        kind = _format(path)

        def write(temporary: Path) -> int:
            with temporary.open("w", encoding="utf-8", newline="") as handle:
                if kind == "csv":
                    writer = csv.DictWriter(handle, fieldnames=list(columns), extrasaction="raise")
                    writer.writeheader()
                    writer.writerows(rows)
                else:
                    for row in rows:
                        handle.write(json.dumps({c: row.get(c, "") for c in columns}, ensure_ascii=False) + "\n")
            return len(rows)

        return replace_atomically(path, write)

    def write_json(self, path: Path, data: Mapping[str, object]) -> None:
        text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
        replace_atomically(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))

    def read(self, path: Path) -> list[tuple[int, dict[str, str]]]:
        kind = _format(path)
        if not path.is_file():
            raise ConfigError(f"review file {path} does not exist")
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as error:
            raise DataError(f"not UTF-8 text ({error.reason})", file=str(path)) from None
        if kind == "csv":
            reader = csv.DictReader(io.StringIO(text, newline=""))  # explanations may hold line breaks
            if reader.fieldnames is None or "item_id" not in reader.fieldnames or "verdict" not in reader.fieldnames:
                raise DataError(f"the header needs item_id and verdict, found {reader.fieldnames}", file=str(path), row=1)
            return [(number, {k: v or "" for k, v in row.items() if k is not None}) for number, row in enumerate(reader, start=2)]
        rows = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as error:
                raise DataError(f"not JSON ({error.msg})", file=str(path), row=number) from None
            if not isinstance(value, dict):
                raise DataError("not a JSON object", file=str(path), row=number)
            rows.append((number, {str(k): "" if v is None else str(v) for k, v in value.items()}))
        return rows
