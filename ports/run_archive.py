"""Finished runs where they are kept: result stores and summary files, opened by what the user names them with."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Protocol

from culturebias.domain.summary import RunSummary
from culturebias.ports.results import ResultStore

# A store as the host names it: settings, a dict of them, a path (a .sqlite file, a JSONL
# folder, a run folder), a DSN, or a ResultStore it owns. Only the archive reads it.
StoreRef = object

# A run as the host names it: its typed summary, its folder or summary.json, or its id in a store.
RunRef = RunSummary | str | Path


class RunArchive(Protocol):
    def open_store(self, store: StoreRef, *, must_exist: bool = False) -> ResultStore:
        """The store ``store`` names, or ``store`` itself when it is one; ``must_exist``: never a new empty store."""
        ...

    def load_summary(self, path: str | Path) -> RunSummary:
        """A summary.json (or a run folder holding one) as its benchmark's typed summary."""
        ...

    def summary_from_dict(self, payload: Mapping[str, Any], where: str = "summary") -> RunSummary:  # Any: JSON values
        """A stored summary object as its benchmark's typed summary; ``where`` names it in errors."""
        ...

    def recorded_store(self, run: str | Path) -> StoreRef | None:
        """The store the summary.json of ``run`` (a run folder or the file) names, unopened: a path (that may no
        longer exist) or a server's settings; None when the run has no summary or it names the folder's own store.
        A server store whose secret is not at hand raises ``DataError``."""
        ...
