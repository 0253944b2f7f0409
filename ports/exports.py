"""Item records written as flat tables (``culturebias export``): one row per item, pandas-ready."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, Sequence

from culturebias.domain.export_schema import RunRecords


class ItemTableWriter(Protocol):
    formats: tuple[str, ...]  # what ``write`` accepts as ``format``

    def write(self, runs: Sequence[RunRecords], out: Path, format: str) -> int:
        """Replace ``out`` with the runs' records as one ``format`` table (all or nothing), each column of the type
        ``domain/export_schema.py`` declares; returns the rows written."""
        ...
