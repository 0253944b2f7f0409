"""Reads a human-winners file (McBE Table 13's pairs): JSONL (one object per line) or CSV (a header row).

Fields: ``item`` (the BEI, e.g. ``gender:2``, or its BA item id ``gender:2|ba``) and ``winner`` (``a``, ``b`` or
``tie``); other fields (an annotator, a note) are kept and ignored. docs/benchmarks/mcbe.md documents the format.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

from culturebias.adapters.datasets.jsonl_rows import jsonl_records
from culturebias.domain.errors import DataError

SUFFIXES = (".jsonl", ".csv")


class HumanWinnersFile:
    """``HumanWinnersReader`` over a ``.jsonl`` or ``.csv`` file (chosen by the suffix)."""

    def read(self, path: Path) -> Sequence[tuple[int, Mapping[str, object]]]:
        suffix = path.suffix.lower()
        if suffix not in SUFFIXES:
            raise DataError(f"a human-winners file is .jsonl or .csv, got {path.suffix or 'no suffix'!r}", file=str(path))
        try:
            text = path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            raise DataError("no such file", file=str(path)) from None
        except (OSError, UnicodeDecodeError) as error:
            raise DataError(f"not readable as UTF-8 text: {error}", file=str(path)) from None
        return _jsonl(text, str(path)) if suffix == ".jsonl" else _csv(text, str(path))


def _jsonl(text: str, file: str) -> list[tuple[int, Mapping[str, object]]]:
    return list(jsonl_records(text, file))


def _csv(text: str, file: str) -> list[tuple[int, Mapping[str, object]]]:
    reader = csv.DictReader(text.splitlines())
    rows: list[tuple[int, Mapping[str, object]]] = []
    for number, record in enumerate(reader, start=2):  # the header is row 1
        if None in record:
            raise DataError("more cells than the header names", file=file, row=number)
        if not any((value or "").strip() for value in record.values()):
            continue
        rows.append((number, {key.strip(): value for key, value in record.items() if key is not None}))
    return rows
