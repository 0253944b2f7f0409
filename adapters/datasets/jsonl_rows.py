"""JSON Lines rows with errors that name the file, the line and the missing field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from culturebias.domain.errors import DataError


def read_jsonl(path: Path, required: tuple[str, ...] = ()) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for every non-blank line (BOM tolerated)."""
    with path.open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise DataError(f"not a JSON object: {error.msg}", file=str(path), row=number) from None
            if not isinstance(row, dict):
                raise DataError("not a JSON object", file=str(path), row=number)
            for name in required:
                if name not in row:
                    raise DataError(f"missing field {name!r}", file=str(path), row=number, field=name)
            yield number, row
