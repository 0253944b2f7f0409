"""Human-readable reports rendered from a run's typed summary (never from anything else)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

from culturebias.domain.summary import RunSummary

SummaryT_contra = TypeVar("SummaryT_contra", bound=RunSummary, contravariant=True)


@runtime_checkable
class ReportWriter(Protocol[SummaryT_contra]):
    """Writes the report of one benchmark's summaries (``ReportWriter[McBESummary]``, ...)."""

    def write(self, summary: SummaryT_contra, out_dir: Path) -> list[Path]:
        """Write the report (and its figures) into ``out_dir``; return the files written."""
        ...
