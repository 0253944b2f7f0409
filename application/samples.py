"""A run's per-item audit trail: ``culturebias samples`` / ``export`` and ``culturebias.samples`` / ``export_samples``.

A run is named as ``compare`` names one: an output folder, its summary.json, or
a run id in a store. Reads the store only (stage ``items``); no model port is
built. Exports go through an ``ItemTableWriter`` (``adapters/files/table_files.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from culturebias.application.audit import stored_items
from culturebias.application.out_folder import JOURNAL_FILE
from culturebias.application.run_store import open_run_store, refuse_live_run
from culturebias.domain.audit import META_PREFIX, SCORE_PREFIX, ItemRecord, matches
from culturebias.domain.errors import ConfigError, CultureBiasError, DataError
from culturebias.domain.export_schema import COMMON_META, RunRecords
from culturebias.domain.leaderboard import EVALUATED_ROLES
from culturebias.domain.runs import RunManifest
from culturebias.domain.summary import RunSummary
from culturebias.ports.exports import ItemTableWriter
from culturebias.ports.results import ResultStore
from culturebias.ports.run_archive import RunArchive, RunRef, StoreRef

FILTERABLE = ("benchmark", "item_id", "prompt", "answer", "parsed", "outcome", "correct")


@dataclass(frozen=True)
class ResolvedRun:
    run_id: str
    where: str  # for messages: the folder, file or store the run was found in


def _summary_run_id(file: Path) -> str:
    try:
        payload = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DataError(f"not a readable summary: {error}", file=str(file)) from None
    run_id = payload.get("run_id") if isinstance(payload, dict) else None
    if not isinstance(run_id, str) or not run_id:
        raise DataError("a summary names its run", file=str(file), field="run_id")
    return run_id


def _folder_run_id(folder: Path, store: ResultStore) -> str:
    """The run of an output folder: its summary's, else the journal's (a killed run), else the store's only run."""
    if (folder / "summary.json").is_file():
        return _summary_run_id(folder / "summary.json")
    try:
        journal = json.loads((folder / JOURNAL_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        journal = {}
    if isinstance(journal, dict) and isinstance(journal.get("run_id"), str):
        return journal["run_id"]
    runs = store.find_runs()
    if len(runs) == 1:
        return runs[0].run_id
    listed = ", ".join(r.run_id for r in runs) or "none"
    raise DataError(f"no summary.json names the run, and the store holds {len(runs)} runs ({listed}): name one by its id with --store", file=str(folder))


def _open(run: RunRef, store: StoreRef | None, archive: RunArchive) -> tuple[ResultStore, ResolvedRun]:
    if isinstance(run, RunSummary):
        if store is None:
            raise DataError("a summary object names its run, not its store: pass store=", file=run.run_id)
        return archive.open_store(store, must_exist=True), ResolvedRun(run.run_id, str(store))
    path = Path(run).expanduser()
    if path.exists():
        folder = path if path.is_dir() else path.parent
        opened = open_run_store(path, store, archive)
        try:
            run_id = _summary_run_id(path) if path.is_file() and path.suffix == ".json" else _folder_run_id(folder, opened)
        except BaseException:
            if opened is not store:
                opened.close()
            raise
        return opened, ResolvedRun(run_id, str(path))
    if store is None:
        raise DataError(
            "no such run folder or summary.json (to name a run id, give the store: --store PATH / store=)", file=str(run)
        )
    return archive.open_store(store, must_exist=True), ResolvedRun(
        str(run), str(store) if isinstance(store, (str, Path)) else "the result store"
    )


def _check_fields(records: Sequence[ItemRecord], where: Mapping[str, str]) -> None:
    known_meta = {k for r in records for k in r.metadata}
    known_scores = {k for r in records for k in r.scores}
    for name in where:
        if name in FILTERABLE:
            continue
        if name.startswith(SCORE_PREFIX) and name[len(SCORE_PREFIX) :] in known_scores:
            continue
        bare = name[len(META_PREFIX) :] if name.startswith(META_PREFIX) else name
        if bare in known_meta:
            continue
        fields = [*FILTERABLE, *sorted(META_PREFIX + k for k in known_meta), *sorted(SCORE_PREFIX + k for k in known_scores)]
        raise ConfigError(f"--filter {name}=...: no such field in these items (fields: {', '.join(fields)})")


def _model_of(store: ResultStore, manifest: RunManifest, archive: RunArchive) -> tuple[str | None, str | None]:
    """The run's model name and fingerprint: its summary's identity, else (never finished) its configured path."""
    payload = store.load_summary(manifest.run_id) if manifest.status == "finished" else None
    if payload is not None:
        try:
            roles = archive.summary_from_dict(payload, where=f"run {manifest.run_id}").model.roles()
        except CultureBiasError:  # a summary this version cannot read: named by its configuration
            roles = {}
        identity = next((roles[r] for r in EVALUATED_ROLES if r in roles), None)
        if identity is not None:
            return identity.model, identity.cache_key()
    found = manifest.config.get("model")
    configured = found if isinstance(found, dict) else {}
    path = configured.get("path") or configured.get("name")
    return (None if path is None else str(path)), None


def load_run_records(
    run: RunRef,
    where: Mapping[str, str] | None = None,
    limit: int | None = None,
    store: StoreRef | None = None,
    *,
    archive: RunArchive,
    meta_columns: Callable[[str], Mapping[str, str]] | None = None,
    ended: str | None = None,
) -> RunRecords:
    """The run's item records (in recorded order) that match every ``field=value`` of ``where``, at most ``limit``,
    with the run's id, benchmark, model and model fingerprint. ``ended``: what reads them (``export``), which
    refuses a run another live process still writes (``RunInUseError``)."""
    if limit is not None and limit < 0:
        raise ConfigError(f"limit must be 0 or more, got {limit}")
    opened, resolved = _open(run, store, archive)
    try:
        manifest = opened.get_run(resolved.run_id)
        if manifest is None:
            raise DataError(f"no run {resolved.run_id!r} in the store", file=resolved.where)
        if ended is not None:
            refuse_live_run(manifest, ended)
        records = stored_items(opened, resolved.run_id)
        model, fingerprint = _model_of(opened, manifest, archive)
    finally:
        if opened is not store:
            opened.close()
    wanted = dict(where or {})
    if wanted and records:
        _check_fields(records, wanted)
    found = [r for r in records if matches(r, wanted)] if wanted else records
    found = found[:limit] if limit is not None else found
    declared = dict(COMMON_META) if meta_columns is None else meta_columns(manifest.benchmark)
    return RunRecords(manifest.run_id, manifest.benchmark, model, fingerprint, found, declared)


def load_samples(
    run: RunRef,
    where: Mapping[str, str] | None = None,
    limit: int | None = None,
    store: StoreRef | None = None,
    *,
    archive: RunArchive,
) -> list[ItemRecord]:
    """The run's item records (in recorded order) that match every ``field=value`` of ``where``, at most ``limit``."""
    return list(load_run_records(run, where, limit, store, archive=archive).records)


def export_samples(
    run: RunRef | Sequence[RunRef],
    out: str | Path,
    format: str = "jsonl",
    *,
    where: Mapping[str, str] | None = None,
    limit: int | None = None,
    store: StoreRef | None = None,
    archive: RunArchive,
    tables: ItemTableWriter,
    meta_columns: Callable[[str], Mapping[str, str]] | None = None,
) -> int:
    """Write the matching item records of a run, or of several runs into one table, to ``out`` as a ``format``
    table (``where`` and ``limit`` apply to each run; ``meta_columns``: a benchmark's declared metadata columns);
    returns the rows written."""
    if format not in tables.formats:  # before the store is read
        raise ConfigError(f"unknown export format {format!r} (choose one of: {', '.join(tables.formats)})")
    refs: list[RunRef] = list(run) if isinstance(run, (list, tuple)) else [cast("RunRef", run)]  # a str is a Sequence too
    if not refs:
        raise ConfigError("export needs at least one run")
    runs = [
        load_run_records(ref, where, limit, store, archive=archive, meta_columns=meta_columns, ended="export")
        for ref in refs
    ]
    return tables.write(runs, Path(out).expanduser(), format)
