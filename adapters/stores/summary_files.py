"""``ports.run_archive.RunArchive`` over summary.json files and result stores.

Typed summaries are read from their JSON (a file, a run folder holding one, or a stored object) with the
summary model of the benchmark they name; which model that is, and how a named store is opened, the
composition root says (the registry of benchmarks and stores).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from culturebias.adapters.stores.recorded_store import recorded_store
from culturebias.application.out_folder import JOURNAL_FILE, OutputFolder
from culturebias.domain.errors import DataError
from culturebias.domain.summary import RunSummary, check_schema_version, parse_summary
from culturebias.ports.results import ResultStore
from culturebias.ports.run_archive import StoreRef

# The typed summary model of a benchmark, by its registered name (an unknown name raises UnknownNameError).
SummaryModelOf = Callable[[str], type[RunSummary]]
# A store as the host names it (``must_exist``: never a new empty store) -> the opened store.
StoreOpener = Callable[[StoreRef, bool], ResultStore]


def read_summary_json(path: str | Path) -> tuple[dict[str, Any], Path]:  # Any: JSON values
    """The JSON object of a summary.json (or of the one in a run folder), and the file it was read from."""
    file = Path(path).expanduser()
    if file.is_dir():
        file = file / "summary.json"
    if not file.is_file():
        raise DataError("no such summary file", file=str(file))
    try:
        payload = json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise DataError(f"not JSON: {error}", file=str(file)) from None
    if not isinstance(payload, dict):
        raise DataError("a summary is a JSON object", file=str(file))
    return payload, file


class SummaryFiles:
    """``RunArchive``: summaries parsed by their benchmark's model, stores opened by ``opener``."""

    def __init__(self, summary_model: SummaryModelOf, opener: StoreOpener):
        self._summary_model = summary_model
        self._opener = opener

    def open_store(self, store: StoreRef, *, must_exist: bool = False) -> ResultStore:
        return self._opener(store, must_exist)

    def load_summary(self, path: str | Path) -> RunSummary:
        payload, file = read_summary_json(path)
        return self.summary_from_dict(payload, where=str(file))

    def summary_from_dict(self, payload: Mapping[str, Any], where: str = "summary") -> RunSummary:  # Any: JSON values
        check_schema_version(payload.get("schema_version"), where)
        benchmark = payload.get("benchmark")
        if not isinstance(benchmark, str):
            raise DataError("no benchmark named", file=where, field="benchmark")
        return parse_summary(self._summary_model(benchmark), dict(payload), where)

    def recorded_store(self, run: str | Path) -> StoreRef | None:
        named = Path(run).expanduser()
        file = named / "summary.json" if named.is_dir() else named
        if not file.is_file():
            # A run that ended before its summary: the store its folder's journal recorded at its start, else the folder.
            section = OutputFolder(named).recorded_store() if named.is_dir() else None
            return recorded_store(section, named, str(named / JOURNAL_FILE)) if section else None
        payload, file = read_summary_json(file)
        config = payload.get("config")
        section = config.get("store") if isinstance(config, dict) else None
        if not isinstance(section, dict):
            return None
        return recorded_store(section, file.parent, str(file))
