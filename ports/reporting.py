"""Human-readable reports rendered from summary.json (never from anything else)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Protocol, runtime_checkable


@runtime_checkable
class ReportWriter(Protocol):
    def write(self, summary: Mapping[str, Any], out_dir: Path) -> list[Path]:
        """Write the report (and its figures) into ``out_dir``; return the files written."""
        ...
