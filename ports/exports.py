"""Item records written as flat tables (``culturebias export``): one row per item, pandas-ready."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, Sequence

from culturebias.domain.audit import ItemRecord


class ItemTableWriter(Protocol):
    formats: tuple[str, ...]  # what ``write`` accepts as ``format``

    def write(self, records: Sequence[ItemRecord], out: Path, format: str) -> int:
        """Replace ``out`` with the records as a ``format`` table (all or nothing); returns the rows written."""
        ...
