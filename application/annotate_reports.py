"""``culturebias check --annotate-reports``: a verdict kept in each checked run folder, its report opening with it.

Runs named by id only (no folder) have no report to annotate and are passed over, as are folders
without a summary.json. The verdict is stored before the report is rewritten, so a comparison of the
run opens with it even where the report cannot be rewritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from culturebias.application.compare_runs import load_runs
from culturebias.application.compared_items import compared_items
from culturebias.domain.policy.verdict import PolicyVerdict
from culturebias.ports.run_archive import RunArchive, StoreRef
from culturebias.ports.verdicts import RunFolderVerdicts, VerdictReports


def annotate_reports(
    verdict: PolicyVerdict,
    runs: Sequence[str | Path],
    store: StoreRef | None,
    *,
    archive: RunArchive,
    folders: RunFolderVerdicts,
    reports: VerdictReports,
) -> list[Path]:
    """Keep ``verdict`` in each run folder among ``runs`` and rewrite its report to open with it; the reports written."""
    written: list[Path] = []
    for run in runs:
        folder = folders.run_folder(run)
        if folder is None:
            continue
        summary = load_runs([folder], None, archive)[0]
        folders.keep(verdict, folder)
        written += reports.annotate(summary, folder, compared_items([folder], [summary], store, archive), verdict)
    return written
