"""Review files (CBBQ Q+Explain, ``culturebias cbbq review-export`` / ``review-import``): rows of text cells."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Protocol, Sequence


class ReviewFiles(Protocol):
    def write(self, path: Path, columns: Sequence[str], rows: Sequence[Mapping[str, str]]) -> int:
        """Replace ``path`` (CSV or JSONL, by its suffix) with ``rows`` (all or nothing); returns the rows written."""
        ...

    def write_json(self, path: Path, data: Mapping[str, object]) -> None:
        """Replace ``path`` with ``data`` as JSON (all or nothing)."""
        ...

    def read(self, path: Path) -> list[tuple[int, dict[str, str]]]:
        """(row number, row) pairs: a CSV's header is row 1, a JSONL file's first line row 1. A file that cannot be
        parsed is a ``DataError`` naming file and row."""
        ...
