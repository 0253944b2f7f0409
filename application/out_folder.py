"""An output folder owned by one run at a time: its lock, its journal, its files.

- ``.culturebias.lock`` is held (``flock``) by the process running there and names
  it (pid, host, start, run id); a second process gets ``OutputFolderBusyError``.
  The lock of a process that died is free, and the next run takes it over.
- ``.culturebias-outputs.json`` is the folder's journal: which run the top-level
  files belong to and whether they were all written. A run that finished in the
  store but was killed before its files were written is repaired by the next run.
- ``summary.json`` and the report at the top belong to the newest finished run.
  When a new run starts in a folder holding an earlier run's files, those move to
  ``previous/<run_id>/`` first: a re-run that fails leaves no file that looks current.
- Files are written through temporary ``.<name>.*.partial`` files renamed into place;
  the next run removes any that a kill left behind.
"""

from __future__ import annotations

import json
import os
import platform
import uuid
from pathlib import Path
from typing import Any, Iterable, Mapping

from culturebias.domain.runs import OutputFolderBusyError, utc_now
from culturebias.logs import get_logger

log = get_logger("culturebias.run")

LOCK_FILE = ".culturebias.lock"
JOURNAL_FILE = ".culturebias-outputs.json"
PREVIOUS = "previous"
SUMMARY_FILE = "summary.json"
TEMP_SUFFIX = ".partial"
# Written by versions before the journal existed: what a folder without one may hold.
LEGACY_OUTPUTS = ("summary.json", "report.md", "*.png")


def write_text_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Not mkstemp: its files are 0600 whatever the umask, and on a shared machine the team reads
    # the summary. O_EXCL on a random name is as safe; the kernel applies the umask to 0666.
    tmp = str(path.parent / f".{path.name}.{uuid.uuid4().hex}{TEMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class FolderLock:
    """An exclusive, advisory lock on a folder that dies with its process."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.path = folder / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            import fcntl
        except ImportError:  # not a POSIX system: runs in one folder are not kept apart there
            log.warning("output folders cannot be locked on this system", folder=str(self.folder))
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise OutputFolderBusyError(str(self.folder), holder) from None
            # The file may have been removed by its last holder after we opened it: lock the one on disk.
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        previous = _read_holder(fd)
        if previous.get("pid"):
            log.info("taking over the lock of a process that is gone", folder=str(self.folder), previous=previous)
        self._fd = fd
        self.describe()

    def describe(self, **extra: object) -> None:
        """Write who holds the lock (and what it runs) into the lock file."""
        if self._fd is None:
            return
        holder = {"pid": os.getpid(), "host": platform.node(), "started": utc_now(), **extra}
        data = json.dumps(holder).encode("utf-8")
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            self.path.unlink(missing_ok=True)  # still holding it: whoever opens the path next gets a new file
        finally:
            os.close(fd)

    def __enter__(self) -> "FolderLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> dict[str, Any]:  # Any: the lock file's JSON
    try:
        raw = os.pread(fd, 4096, 0)
        holder = json.loads(raw.decode("utf-8")) if raw.strip() else {}
        return holder if isinstance(holder, dict) else {}
    except (OSError, ValueError):
        return {}


class OutputFolder:
    def __init__(self, path: Path):
        self.path = path
        self.lock = FolderLock(path)

    # -- temporary files ----------------------------------------------------------
    def remove_leftovers(self) -> list[Path]:
        """Temporary files of writes that a kill cut short (``.summary.json.*`` of older versions too)."""
        found = [p for p in self.path.glob(f".*{TEMP_SUFFIX}") if p.is_file()]
        found += [p for p in self.path.glob(f".{SUMMARY_FILE}.*") if p.is_file() and p not in found]
        for path in found:
            path.unlink(missing_ok=True)
        if found:
            log.info("removed temporary files left by an interrupted run", files=[p.name for p in found])
        return found

    # -- the journal --------------------------------------------------------------
    def journal(self) -> dict[str, Any]:  # Any: the journal's JSON
        path = self.path / JOURNAL_FILE
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return entry if isinstance(entry, dict) else {}

    def _write_journal(self, entry: dict[str, Any]) -> None:  # Any: the journal's JSON
        write_text_atomically(self.path / JOURNAL_FILE, json.dumps(entry, ensure_ascii=False, indent=1))

    def begin(self, run_id: str, benchmark: str, store: Mapping[str, Any] | None = None) -> None:  # Any: JSON values
        """From now on the top-level files belong to ``run_id`` (and are not written yet). ``store``: the run's
        store section as its summary will record it (redacted, a file store's path absolute), so that a run
        that ends before its summary is still found through its folder."""
        entry: dict[str, Any] = {"run_id": run_id, "benchmark": benchmark, "state": "running", "files": []}  # Any: JSON
        if store:
            entry["store"] = dict(store)
        self._write_journal(entry)

    def recorded_store(self) -> dict[str, Any] | None:  # Any: the store section's JSON values
        """The store section the journal's run recorded at its start (None: none recorded, its folder's own)."""
        section = self.journal().get("store")
        return section if isinstance(section, dict) else None

    def ended(self, run_id: str, state: str, reason: str) -> None:
        """The run ended without its files (``failed``, ``interrupted``), and why: the folder never says
        ``running`` of a run that is not. Its files so far stay listed; ``--resume`` continues it."""
        entry = self.journal()
        if entry.get("run_id") == run_id:
            self._write_journal({**entry, "state": state, "reason": reason})

    def add(self, run_id: str, name: str, text: str) -> Path:
        """Write ``name`` (atomically) as one of ``run_id``'s files before its run finishes (its plan)."""
        path = self.path / name
        write_text_atomically(path, text)
        entry = self.journal()
        if entry.get("run_id") == run_id:
            entry["files"] = sorted({*entry.get("files", []), name})
            self._write_journal(entry)
        return path

    def written(self, run_id: str, benchmark: str, files: Iterable[Path]) -> None:
        entry = self.journal()
        earlier = entry.get("files", []) if entry.get("run_id") == run_id else []  # files added while it ran
        names = sorted({*earlier, *(self._relative(f) for f in files)})
        written: dict[str, Any] = {"run_id": run_id, "benchmark": benchmark, "state": "written", "files": names}  # Any: JSON
        if entry.get("run_id") == run_id and isinstance(entry.get("store"), dict):
            written["store"] = entry["store"]
        self._write_journal(written)

    def _relative(self, file: Path) -> str:
        try:
            return Path(file).resolve().relative_to(self.path.resolve()).as_posix()
        except ValueError:
            return str(file)

    # -- earlier runs' files ------------------------------------------------------
    def set_aside(self, keep_run_id: str) -> Path | None:
        """Move the files of an earlier run (not ``keep_run_id``) to ``previous/<its run id>/``."""
        entry = self.journal()
        if entry.get("run_id") == keep_run_id:
            return None
        if entry:
            owner = entry.get("run_id")
            files = [self.path / name for name in entry.get("files", [])]
        else:
            owner, files = self._legacy_outputs()
        files = [f for f in files if f.is_file()]
        if not files:
            return None
        target = self.path / PREVIOUS / str(owner or "unknown")
        for file in files:
            destination = target / file.relative_to(self.path)
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.replace(file, destination)
        log.info("set the files of an earlier run aside", run_id=owner, folder=str(target))
        return target

    def _legacy_outputs(self) -> tuple[str | None, list[Path]]:
        summary = self.path / SUMMARY_FILE
        owner = None
        if summary.is_file():
            try:
                owner = json.loads(summary.read_text(encoding="utf-8")).get("run_id")
            except (OSError, ValueError, AttributeError):
                owner = None
        files = sorted({p for pattern in LEGACY_OUTPUTS for p in self.path.glob(pattern) if p.is_file()})
        return owner, files
