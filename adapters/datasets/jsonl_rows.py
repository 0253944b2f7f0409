"""JSON Lines rows, read through ``text_files``, with errors that name the file, the line and the missing field."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Iterator

from culturebias.adapters.datasets.text_files import decode_text
from culturebias.domain.errors import DataError


def jsonl_records(text: str, file: str, required: tuple[str, ...] = ()) -> Iterator[tuple[int, dict]]:
    """``(line_number, object)`` for every non-blank line of ``text``; lines end at \\n, \\r\\n or \\r only."""
    for number, line in enumerate(io.StringIO(text, newline=None), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise DataError(f"not a JSON object: {error.msg}", file=file, row=number) from None
        if not isinstance(row, dict):
            raise DataError("not a JSON object", file=file, row=number)
        for name in required:
            if name not in row:
                raise DataError(f"missing field {name!r}", file=file, row=number, field=name)
        yield number, row


def read_jsonl(path: Path, required: tuple[str, ...] = ()) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for every non-blank line of ``path`` (any byte order mark tolerated)."""
    yield from jsonl_records(decode_text(path.read_bytes(), str(path)), str(path), required)
