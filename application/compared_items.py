"""The audit records of compared runs, for the drill-down of comparison.html.

A run named by its folder or summary.json has its items in the store ``run_store`` finds (the store
given, else the one its summary names, else the folder's); a run id has them in the store given; a summary object has none at hand. A store that cannot be opened
(a summary.json copied without its store) leaves that run without a drill-down, never the report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from culturebias.application.audit import stored_items
from culturebias.application.run_store import run_store
from culturebias.domain.audit import ItemRecord
from culturebias.domain.errors import ConfigError, DataError
from culturebias.domain.summary import RunSummary
from culturebias.ports.run_archive import RunArchive, RunRef, StoreRef

# run id -> the stored item records of that compared run, or None.
ItemsOf = Callable[[str], list[ItemRecord] | None]


def _read(store_ref: StoreRef, run_id: str, archive: RunArchive) -> list[ItemRecord] | None:
    try:
        store = archive.open_store(store_ref, must_exist=True)
    except (ConfigError, DataError, OSError):
        return None
    try:
        return stored_items(store, run_id)  # in recorded order, as the run's own report.html shows them
    finally:
        if store is not store_ref:
            store.close()


def compared_items(
    runs: Sequence[RunRef], summaries: Sequence[RunSummary], store: StoreRef | None, archive: RunArchive
) -> ItemsOf:
    """run id → the stored item records of that compared run, or None."""
    where: dict[str, StoreRef] = {}
    for run, summary in zip(runs, summaries):
        if isinstance(run, RunSummary):
            continue
        path = Path(run).expanduser()
        if path.exists():
            where[summary.run_id] = run_store(path, store, archive)  # a moved store: one line, not a lost drill-down
        elif store is not None:
            where[summary.run_id] = store

    def items(run_id: str) -> list[ItemRecord] | None:
        return _read(where[run_id], run_id, archive) if run_id in where else None

    return items
