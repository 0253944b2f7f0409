"""``culturebias kobbq-split-check``: footnote 14's check of the evaluation split against the full set.

Reads one model's two finished KoBBQ runs (folders, summary.json files or ids in
a store) through the ``RunArchive``, checks them in the domain
(``domain/kobbq/split_check.py``) and hands the result to the report writer.
Bad input (a missing run, a run of another benchmark, summaries without
template scores, two models) raises before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from culturebias.application.compare_runs import load_runs
from culturebias.domain.errors import DataError
from culturebias.domain.kobbq.split_check import FULL, SPLIT, SplitCheck, check_split
from culturebias.domain.kobbq.summary import KoBBQSummary
from culturebias.domain.summary import RunSummary
from culturebias.ports.run_archive import RunArchive, RunRef, StoreRef

# Writes the check into a folder (its JSON and Markdown) and returns the files written.
SplitCheckWriter = Callable[[SplitCheck, Path], list[Path]]


def kobbq_split_check(
    split: RunRef,
    full: RunRef,
    *,
    archive: RunArchive,
    writer: SplitCheckWriter,
    out: str | Path | None = None,
    store: StoreRef | None = None,
) -> tuple[SplitCheck, list[Path]]:
    """The check and the files written (none without ``out``)."""
    loaded = load_runs([split, full], store, archive)
    summaries = []
    for name, ref, summary in zip((SPLIT, FULL), (split, full), loaded):
        if not isinstance(summary, KoBBQSummary):
            raise DataError(
                f"the {name} run is a {summary.benchmark} run; footnote 14's check compares two KoBBQ runs",
                file=summary.run_id if isinstance(ref, RunSummary) else str(ref),
                field="benchmark",
            )
        summaries.append(summary)
    check = check_split(summaries[0], summaries[1])
    if out is None:
        return check, []
    return check, writer(check, Path(out).expanduser())
