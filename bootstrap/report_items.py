"""The audit records of compared runs, for the drill-down of comparison.html.

A run named by its folder or summary.json has its items in that folder's result store; a run id
has them in the store given; a summary object has none at hand. A store that cannot be opened
(a summary.json copied without its store) leaves that run without a drill-down, never the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from culturebias.domain.audit import ITEMS_STAGE
from culturebias.domain.errors import ConfigError, DataError
from culturebias.domain.summary import RunSummary


def _read(store_ref: Any, run_id: str) -> list[dict[str, Any]] | None:
    from culturebias.bootstrap.api import open_store

    try:
        store = open_store(store_ref, must_exist=True)
    except (ConfigError, DataError, OSError):
        return None
    try:
        return list(store.load_results(run_id, ITEMS_STAGE).values())
    finally:
        if store is not store_ref:
            store.close()


def compared_items(runs: Sequence[Any], summaries: Sequence[RunSummary], store: Any = None):
    """run id → the stored item records (their JSON) of that compared run, or None."""
    where: dict[str, Any] = {}
    for run, summary in zip(runs, summaries):
        if isinstance(run, RunSummary):
            continue
        path = Path(run).expanduser()
        if path.exists():
            where[summary.run_id] = path if path.is_dir() else path.parent
        elif store is not None:
            where[summary.run_id] = store

    def items(run_id: str) -> list[dict[str, Any]] | None:
        return _read(where[run_id], run_id) if run_id in where else None

    return items
