"""Comparison reports: rendered from a typed comparison (never from anything else)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from culturebias.domain.comparison.envelope import BodyT, Comparison


@runtime_checkable
class ComparisonReportWriter(Protocol[BodyT]):
    """Writes the report of one benchmark's comparisons (``Comparison[BodyT]``)."""

    def write(self, comparison: Comparison[BodyT], out_dir: Path) -> list[Path]:
        """Write the comparison report (and its figures) into ``out_dir``; return the files written."""
        ...
