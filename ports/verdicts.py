"""Where a policy verdict is kept with the runs it was checked on, and the reports that open with it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from culturebias.domain.policy.verdict import PolicyVerdict
from culturebias.domain.summary import RunSummary

# run id -> the run's stored item records (ItemRecords or their JSON), or None where none are at hand.
ItemsOfRun = Callable[[str], Sequence[Any] | None]  # Any: ItemRecords or their JSON


class RunFolderVerdicts(Protocol):
    def run_folder(self, run: str | Path) -> Path | None:
        """The run folder of a run named by its folder or summary.json; None where no summary.json is there."""
        ...

    def keep(self, verdict: PolicyVerdict, folder: Path) -> Path:
        """Store ``verdict`` in the run folder (what a comparison of the run opens with); the file written."""
        ...


class VerdictReports(Protocol):
    def annotate(self, summary: RunSummary, folder: Path, items: ItemsOfRun, verdict: PolicyVerdict) -> list[Path]:
        """Rewrite the run's report in ``folder`` so that it opens with ``verdict``; the report files rewritten."""
        ...
