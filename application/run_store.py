"""Where a run's records are: the one rule every command that reads a run by its folder follows.

``export``, ``samples``, ``check`` (runs and baselines), ``compare`` and the reports a verdict annotates
read a run named by its folder (or summary.json) from

1. the store the caller names (``--store``, ``--baseline-store``, ``store=``): an override;
2. else the store the run's summary.json names (``config.store``: a SQLite file or JSONL folder that
   exists, or a PostgreSQL DSN whose secret comes from the environment as when it ran, never from the file);
3. else the run folder (its ``results.sqlite`` or ``results/``).

A summary that names a store which is no longer there, in a folder that holds none, is one line
(``DataError``, exit 3) saying where the summary says the store was and how to point at it.
"""

from __future__ import annotations

from pathlib import Path

from culturebias.application.out_folder import JOURNAL_FILE, OutputFolder
from culturebias.domain.errors import DataError
from culturebias.domain.runs import RunInUseError, RunManifest
from culturebias.application.run_lease import LeaseRule
from culturebias.ports.results import ResultStore
from culturebias.ports.run_archive import RunArchive, StoreRef

# The file names a run folder's own store has (sqlite, jsonl): a folder holding one of them has its store.
FOLDER_STORES = ("results.sqlite", "results")


def run_folder(run: str | Path) -> Path:
    """The folder of a run named by its folder or its summary.json."""
    path = Path(run).expanduser()
    return path if path.is_dir() else path.parent


def run_store(run: str | Path, store: StoreRef | None, archive: RunArchive) -> StoreRef:
    """The store to read the run at ``run`` (an existing folder or summary.json) from, unopened."""
    if store is not None:
        return store
    folder = run_folder(run)
    recorded = archive.recorded_store(run)
    if recorded is None:
        return folder
    if isinstance(recorded, Path) and not recorded.exists():
        if any((folder / name).exists() for name in FOLDER_STORES):
            return folder  # the run folder travelled with its own store
        summary = folder / "summary.json"
        record = ("summary", summary, "config.store.path") if summary.is_file() else ("record", folder / JOURNAL_FILE, "store.path")
        raise DataError(
            f"the run's store is not where its {record[0]} says it was ({recorded}); if it moved, point at it "
            "with --store PATH (store= in Python)",
            file=str(record[1]), field=record[2],
        )
    return recorded


def open_run_store(run: str | Path, store: StoreRef | None, archive: RunArchive) -> ResultStore:
    """The opened store of ``run_store`` (never a new empty one); close it unless it is ``store`` itself."""
    return archive.open_store(run_store(run, store, archive), must_exist=True)


def refuse_live_run(manifest: RunManifest, what: str, rule: LeaseRule | None = None) -> None:
    """``RunInUseError`` (exit 8) for a run still ``running`` whose lease is live: ``what`` it would read is
    not whole yet. A run left running by a process that is gone reads as it is."""
    if manifest.status == "running" and (rule or LeaseRule()).is_live(manifest.lease):
        assert manifest.lease is not None  # a live lease is a lease
        raise RunInUseError(
            manifest.run_id, manifest.lease,
            f"{what} reads a run once it has ended: wait for it to finish, or stop it (then --resume it)",
        )


def refuse_running_folder(run: str | Path, store: StoreRef | None, archive: RunArchive, what: str) -> None:
    """A run folder without summary.json whose run another live process still writes: ``RunInUseError``
    (exit 8), not "no summary" (``what`` reads a run once it has ended). Anything else is left to the caller."""
    folder = Path(run).expanduser()
    if not folder.is_dir() or (folder / "summary.json").exists():
        return
    run_id = OutputFolder(folder).journal().get("run_id")
    if not isinstance(run_id, str):
        return
    try:
        opened = open_run_store(folder, store, archive)
    except Exception:  # no store to ask: the caller's own error (no summary) says what is missing
        return
    try:
        manifest = opened.get_run(run_id)
    finally:
        if opened is not store:
            opened.close()
    if manifest is not None:
        refuse_live_run(manifest, what)
