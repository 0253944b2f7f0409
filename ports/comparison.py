"""Comparison reports: rendered from a typed comparison (never from anything else)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class ComparisonReportWriter(Protocol):
    def write(self, comparison: Any, out_dir: Path) -> list[Path]:
        """Write the comparison report (and its figures) into ``out_dir``; return the files written."""
        ...
