"""Wiring of ``culturebias compare`` and ``culturebias.compare``: runs named by folder, file or id, to typed summaries.

Reads stored results only: summary.json files and result stores. No model
port is built, so no model runtime is imported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from culturebias.adapters.reports.comparison_report import ComparisonReport
from culturebias.adapters.reports.html.comparison_report import HtmlComparisonReport
from culturebias.adapters.reports.html.run_report import WithHtml
from culturebias.application.compare import ComparisonResult, compare_summaries
from culturebias.bootstrap.api import load_summary, open_store, summary_from_dict
from culturebias.application.compared_items import compared_items
from culturebias.bootstrap.settings import StoreSettings
from culturebias.domain.errors import DataError
from culturebias.domain.summary import RunSummary
from culturebias.ports.results import ResultStore

RunRef = RunSummary | str | Path
StoreRef = StoreSettings | Mapping[str, Any] | str | Path | ResultStore


def _from_store(run_id: str, store: ResultStore, where: str) -> RunSummary:
    manifest = store.get_run(run_id)
    if manifest is None:
        raise DataError(f"no run {run_id!r} in the store", file=where)
    if manifest.status != "finished":
        why = f": {manifest.failure}" if manifest.failure else ""
        raise DataError(f"run {run_id} is {manifest.status}, not finished{why}; only finished runs can be compared", file=where)
    payload = store.load_summary(run_id)
    if payload is None:
        raise DataError(f"run {run_id} has no stored summary", file=where)
    return summary_from_dict(payload, where=f"{where} (run {run_id})")


def load_runs(runs: Sequence[RunRef], store: StoreRef | None = None) -> list[RunSummary]:
    """Each run as its typed summary: a summary object, a run folder or summary.json, or a run id in ``store``."""
    opened = open_store(store, must_exist=True) if store is not None else None
    where = str(store) if isinstance(store, (str, Path)) else "the result store"
    try:
        summaries = []
        for run in runs:
            if isinstance(run, RunSummary):
                summaries.append(run)
            elif Path(run).expanduser().exists():
                summaries.append(load_summary(run))
            elif opened is not None:
                summaries.append(_from_store(str(run), opened, where))
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
) -> ComparisonResult:
    summaries = load_runs(runs, store)
    out_dir = Path(out).expanduser() if out is not None else None
    # comparison.md, then comparison.html beside it (drill-down to the compared runs' stored items)
    report = WithHtml(ComparisonReport(), HtmlComparisonReport(compared_items(runs, summaries, store)))
    return compare_summaries(
        summaries,
        out_dir=out_dir,
        report=report if out_dir is not None else None,
        allow_data_mismatch=allow_data_mismatch,
    )
