"""What a sequential check (``check --sequential``) drives: one round, a nested stratified sample, run and stored."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from culturebias.domain.summary import RunSummary


@runtime_checkable
class RoundRunner(Protocol):
    """Runs a benchmark on ``--sample N`` (seed ``seed``) into ``folder``, resumable, answers shared across rounds."""

    def run_round(self, benchmark: str, sample: int, seed: int, folder: Path) -> RunSummary:
        """The finished round's summary (a round a kill stopped continues where it stopped)."""
        ...

    def records(self, summary: RunSummary) -> Sequence[Any] | None:  # Any: ItemRecords
        """The round's stored item records, in recorded order."""
        ...
