"""``culturebias compare`` and ``culturebias.compare``: runs named by folder, file or id, to typed summaries, compared.

Reads stored results only: summary.json files and result stores, through a
``RunArchive``. No model port is built, so no model runtime is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from culturebias.application.compare import Comparer, ComparisonResult, compare_summaries
from culturebias.application.compared_items import ItemsOf, compared_items
from culturebias.application.run_store import refuse_running_folder
from culturebias.domain.errors import ConfigError, DataError
from culturebias.domain.summary import RunSummary
from culturebias.ports.comparison import ComparisonReportWriter
from culturebias.ports.results import ResultStore
from culturebias.ports.run_archive import RunArchive, RunRef, StoreRef

# The comparison's report writers, given the compared benchmark and the stored items of its runs (for a drill-down).
ComparisonReports = Callable[[str, ItemsOf], ComparisonReportWriter]


def _from_store(run_id: str, store: ResultStore, where: str, archive: RunArchive) -> RunSummary:
    manifest = store.get_run(run_id)
    if manifest is None:
        raise DataError(f"no run {run_id!r} in the store", file=where)
    if manifest.status != "finished":
        why = f": {manifest.failure}" if manifest.failure else ""
        raise DataError(f"run {run_id} is {manifest.status}, not finished{why}; only finished runs can be compared", file=where)
    payload = store.load_summary(run_id)
    if payload is None:
        raise DataError(f"run {run_id} has no stored summary", file=where)
    return archive.summary_from_dict(payload, where=f"{where} (run {run_id})")


def load_runs(runs: Sequence[RunRef], store: StoreRef | None, archive: RunArchive) -> list[RunSummary]:
    """Each run as its typed summary: a summary object, a run folder or summary.json, or a run id in ``store``."""
    opened = archive.open_store(store, must_exist=True) if store is not None else None
    where = str(store) if isinstance(store, (str, Path)) else "the result store"
    try:
        summaries = []
        for run in runs:
            if isinstance(run, RunSummary):
                summaries.append(run)
            elif Path(run).expanduser().exists():
                refuse_running_folder(run, store, archive, "this command")
                summaries.append(archive.load_summary(run))
            elif opened is not None:
                summaries.append(_from_store(str(run), opened, where, archive))
            else:
                raise DataError(
                    "no such run folder or summary.json (to name a run id, give the store: --store PATH / store=)", file=str(run)
                )
        return summaries
    finally:
        if opened is not None and opened is not store:
            opened.close()


def compare_runs(
    runs: Sequence[RunRef],
    *,
    out: str | Path | None = None,
    store: StoreRef | None = None,
    allow_data_mismatch: bool = False,
    archive: RunArchive,
    reports: ComparisonReports,
    comparers: Callable[[str], Comparer],
) -> ComparisonResult:
    """``comparers(benchmark)`` and ``reports(benchmark, items)`` are the compared benchmark's own (its descriptor's)."""
    summaries = load_runs(runs, store, archive)
    if not summaries:
        raise ConfigError("nothing to compare: name at least two runs")
    out_dir = Path(out).expanduser() if out is not None else None
    benchmark = summaries[0].benchmark
    items = compared_items(runs, summaries, store, archive)
    report = reports(benchmark, items)
    return compare_summaries(
        summaries,
        comparers(benchmark),
        out_dir=out_dir,
        report=report if out_dir is not None else None,
        allow_data_mismatch=allow_data_mismatch,
        records=items,
    )
