"""Run orchestration: one benchmark, one run id, transactional and resumable.

1. take the output folder's lock (a second process there gets a clear error),
   remove temporary files a killed run left, and repair a run that finished in
   the store but was killed before its files were written;
2. fingerprint the data and the configuration;
3. open a new run, or with ``resume`` the unfinished run this output folder
   recorded (its journal), else the newest unfinished run of the same
   benchmark, configuration and data in the store that no live process holds
   (a differing one is refused, naming the settings that differ); the run's
   lease (``run_lease.py``) is taken, so no other process resumes it while this
   one writes it; an earlier run's files in the folder move to
   ``previous/<run_id>/``;
4. announce the run's plan (``RunRequest.announce``: printed, logged, ``plan.json`` in the folder), now
   that the run is recorded; then let the service check the backend's capabilities and return its frozen plan, before anything is scored;
5. run the service with that plan (its ports store every result as it goes);
6. build the typed summary, store it (the run is finished), then write
   ``summary.json`` atomically and the report.

``summary.json`` appears only when the whole run succeeded. Ctrl-C and SIGTERM
(``RunInterrupted``) mark the run ``interrupted`` after storing what was computed.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generic, Mapping, TypeVar

import structlog

import culturebias
from culturebias.application.benchmark import BenchmarkService
from culturebias.application.context import Lazy, RunContext
from culturebias.application.out_folder import OutputFolder, write_text_atomically  # noqa: F401  (re-exported)
from culturebias.application.repeats import run_repeats
from culturebias.application.run_lease import DEFAULT_LEASE_SECONDS, LeaseRule, RunLeaseKeeper
from culturebias.domain.errors import ResumeMismatchError
from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.redaction import redact_text
from culturebias.domain.run_plan import RunPlan
from culturebias.domain.runs import RunInUseError, RunManifest, identity_differences, utc_now
from culturebias.domain.summary import SUMMARY_SCHEMA_VERSION, RunSummary
from culturebias.logs import get_logger
from culturebias.ports.datasets import DatasetSource
from culturebias.ports.described import Described, Identified, ProbeReporting, TemplateAccounting
from culturebias.ports.reporting import ReportWriter
from culturebias.ports.results import ResultStore

log = get_logger("culturebias.run")

SummaryT = TypeVar("SummaryT", bound=RunSummary)


@dataclass
class RunRequest(Generic[SummaryT]):
    benchmark: str
    service: BenchmarkService[Any, Any]  # Any: the benchmark's own dataset and plan types, passed through
    summary_model: type[SummaryT]
    source: DatasetSource[Any]  # Any: the benchmark's own dataset type
    store: ResultStore
    report: ReportWriter[SummaryT] | None
    out_dir: Path | None  # None: the summary lives in the store only (no files written)
    config: dict[str, Any]  # the effective configuration, secrets already redacted; Any: JSON
    config_fingerprint: str
    # The benchmark's headline metrics (its descriptor's): what run.repeats reports mean ± std of.
    headlines: tuple[HeadlineMetric, ...]
    resume: bool = False
    # The settings that decide the numbers (``config_fingerprint`` is their hash); stored with
    # the run so that a refused ``--resume`` can name what differs.
    identity: dict[str, Any] | None = None  # Any: JSON settings
    # run.repeats: the service runs this many times in this run, repeat i sampling with seed + i.
    repeats: int = 1
    # run.lease_seconds: a run whose writer's heartbeat is older than this is free to resume.
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    # The run's plan, made and shown once the run is recorded (its manifest holds a resumed run's progress);
    # None: no plan (run.plan=never). It must have no effect on the run: no model request, nothing stored.
    announce: Callable[[RunManifest], RunPlan | None] | None = None


@dataclass
class RunResult:
    run_id: str
    summary_path: Path | None
    report_paths: list[Path]
    summary: RunSummary


def _open_run(
    request: RunRequest[SummaryT], data_fingerprint: str, folder_run_id: str | None,
    folder_store: Mapping[str, Any] | None = None,  # Any: the store section the folder's journal recorded
) -> tuple[RunManifest, RunLeaseKeeper]:
    """The run to write and this process's lease on it. ``folder_run_id``: the run the output folder recorded
    (``folder_store``: in the store its journal names)."""
    store = request.store
    rule = LeaseRule(stale_seconds=request.lease_seconds)
    if request.resume:
        candidates = [m for m in store.find_runs(request.benchmark) if m.status != "finished"]
        matching = [
            m
            for m in candidates
            if m.config_fingerprint == request.config_fingerprint and m.data_fingerprint == data_fingerprint
        ]
        own = next((m for m in candidates if m.run_id == folder_run_id), None)
        if own is not None:  # the folder's own run first: never another folder's, while it has one
            if own not in matching:
                raise ResumeMismatchError(_mismatch(own, request, data_fingerprint))
            keeper = RunLeaseKeeper(store, own.run_id, rule)
            holder = keeper.acquire()
            if holder is not None:
                raise RunInUseError(
                    own.run_id, holder, "--resume continues the run this output folder recorded and never writes a run "
                    "another process holds: wait for it to finish, or stop it (then --resume, or `culturebias runs "
                    "--mark-interrupted` where it is left running)",
                )
            return _resumed(store, own), keeper
        for manifest in sorted(matching, key=lambda m: m.created_at, reverse=True):
            keeper = RunLeaseKeeper(store, manifest.run_id, rule)
            holder = keeper.acquire()
            if holder is None:
                return _resumed(store, manifest), keeper
            log.info("not resuming a run that another live process writes", run_id=manifest.run_id, holder=holder.text())
        if candidates and not matching:
            raise ResumeMismatchError(_mismatch(max(candidates, key=lambda m: m.created_at), request, data_fingerprint))
        if folder_run_id is not None and own is None and store.get_run(folder_run_id) is None:
            recorded = (folder_store or {}).get("path") or (folder_store or {}).get("dsn") or "its own folder"
            log.warning(
                "--resume: this folder's run is not in the store this run writes (its journal says it is in "
                f"{recorded}; a relative store.path is read from the working folder); starting a new run",
                folder_run_id=folder_run_id,
            )
        log.info("nothing to resume; starting a new run")
    manifest = RunManifest(
        run_id=f"{request.benchmark}-{uuid.uuid4().hex[:12]}",
        benchmark=request.benchmark,
        config=request.config,
        config_fingerprint=request.config_fingerprint,
        data_fingerprint=data_fingerprint,
        identity=request.identity or {},
    )
    store.create_run(manifest)
    keeper = RunLeaseKeeper(store, manifest.run_id, rule)
    keeper.acquire()  # a new run id: nobody else holds it
    return manifest, keeper


def _resumed(store: ResultStore, manifest: RunManifest) -> RunManifest:
    log.info("resuming run", run_id=manifest.run_id, stored_since=manifest.created_at, progress=manifest.progress_text())
    if manifest.status != "running":
        store.mark_running(manifest.run_id)
    return manifest


def _mismatch(stored: RunManifest, request: RunRequest[SummaryT], data_fingerprint: str) -> str:
    """Why ``--resume`` cannot continue ``stored``: the settings (or the data) that differ."""
    reasons = []
    if stored.config_fingerprint != request.config_fingerprint:
        differences = identity_differences(stored.identity, request.identity or {}) if stored.identity else []
        if differences:
            reasons.append("a different configuration (" + "; ".join(differences) + ")")
        else:
            reasons.append(f"a different configuration (stored {stored.config_fingerprint}, now {request.config_fingerprint})")
    if stored.data_fingerprint != data_fingerprint:
        reasons.append(f"different data (data fingerprint stored {stored.data_fingerprint}, now {data_fingerprint})")
    return (
        f"--resume: unfinished run {stored.run_id} has " + " and ".join(reasons)
        + "; run without --resume to start afresh, or resume with the stored settings"
    )


def run_benchmark(request: RunRequest[SummaryT], make_context: Callable[[str], RunContext]) -> RunResult:
    """``make_context(run_id) -> RunContext`` builds the ports for this run."""
    if request.out_dir is None:
        return _run(request, make_context, None)
    folder = OutputFolder(request.out_dir)
    with folder.lock:
        folder.remove_leftovers()
        repaired = _repair(folder, request)
        if repaired is not None and request.resume and _same_job(repaired.summary, request):
            log.info("--resume: the folder's run had finished; its files are written from the store, nothing is scored again", run_id=repaired.run_id)
            return repaired
        return _run(request, make_context, folder)


def _same_job(summary: RunSummary, request: RunRequest[SummaryT]) -> bool:
    return summary.config_fingerprint == request.config_fingerprint and summary.data.fingerprint == request.source.fingerprint()


def _run(request: RunRequest[SummaryT], make_context: Callable[[str], RunContext], folder: OutputFolder | None) -> RunResult:
    data_fingerprint = request.source.fingerprint()
    dataset = request.source.load()
    journal = folder.journal() if folder is not None else {}
    folder_run_id = journal.get("run_id") if journal.get("benchmark") == request.benchmark else None
    manifest, keeper = _open_run(request, data_fingerprint, folder_run_id, _store_section(journal))
    try:
        return _write_run(request, make_context, folder, manifest, keeper, data_fingerprint, dataset)
    finally:
        keeper.release()


def _write_run(
    request: RunRequest,
    make_context: Callable[[str], RunContext],
    folder: OutputFolder | None,
    manifest: RunManifest,
    keeper: RunLeaseKeeper,
    data_fingerprint: str,
    dataset: Any,  # Any: the benchmark's own dataset type
) -> RunResult:
    structlog.contextvars.bind_contextvars(run_id=manifest.run_id, benchmark=request.benchmark)
    try:
        try:
            if folder is not None:
                folder.lock.describe(run_id=manifest.run_id)
                folder.set_aside(keep_run_id=manifest.run_id)
                folder.begin(manifest.run_id, request.benchmark, store=_store_section(request.config))
            ctx = make_context(manifest.run_id)
            _announce(request, folder, manifest)
            # A plan's dry run is a run of its own: it bound and unbound these.
            structlog.contextvars.bind_contextvars(run_id=manifest.run_id, benchmark=request.benchmark)
            plan = request.service.preflight(ctx)
            outcome, repeats = run_repeats(
                request.service, ctx, dataset, plan, request.repeats, request.benchmark, request.summary_model,
                request.headlines,
            )
            summary = request.summary_model.model_validate(
                {
                    "schema_version": SUMMARY_SCHEMA_VERSION,
                    "benchmark": request.benchmark,
                    "run_id": manifest.run_id,
                    "created_at": manifest.created_at,
                    "finished_at": utc_now(),
                    "culturebias_version": culturebias.__version__,
                    "model": _model_block(ctx),
                    "data": {"source": request.source.describe(), "fingerprint": data_fingerprint},
                    "config": request.config,
                    "config_fingerprint": request.config_fingerprint,
                    "limit": outcome.limit,
                    "sample": outcome.drawn_sample,
                    "repeats": repeats,
                    "metrics": outcome.metrics,
                    "counts": outcome.counts,
                    "notes": outcome.notes,
                    "details": outcome.details,
                    "validity": outcome.validity,
                }
            )
            keeper.check()  # a run another process took over is finished by that process, not here
            # The store first: a kill before the files are written is repaired by the next run in the folder.
            request.store.finish_run(manifest.run_id, summary.as_dict())
        except KeyboardInterrupt as stop:
            _ended(request, folder, manifest, keeper, "interrupted", str(stop) or "interrupted by SIGINT (Ctrl-C)")
            log.warning("run interrupted; what was computed is stored, continue with --resume", progress=_progress(request, manifest))
            raise
        except BaseException as error:
            _ended(request, folder, manifest, keeper, "failed", redact_text(f"{type(error).__name__}: {error}"))
            raise
        summary_path, reports = _write_outputs(folder, request, summary)
        log.info("run finished", summary=str(summary_path) if summary_path else "in the store")
        return RunResult(manifest.run_id, summary_path, reports, summary)
    finally:
        structlog.contextvars.unbind_contextvars("run_id", "benchmark")


PLAN_FILE = "plan.json"


def _store_section(config: Mapping[str, Any]) -> Mapping[str, Any] | None:  # Any: the redacted configuration's JSON
    """The store section of the run's (redacted) configuration, which the folder's journal keeps."""
    section = config.get("store") if isinstance(config, Mapping) else None
    return section if isinstance(section, Mapping) else None


def _ended(
    request: RunRequest, folder: OutputFolder | None, manifest: RunManifest, keeper: RunLeaseKeeper, state: str, reason: str
) -> None:
    """Mark a run that ended without its summary ``failed`` or ``interrupted``, with why, in the store and the
    folder's journal: nothing says ``running`` of a run that is not (``--resume`` continues it). A run another
    process took over is that process's to mark; a store that cannot be written now (its server gone) is logged."""
    if keeper.lost:
        return
    try:
        if state == "interrupted":
            request.store.mark_interrupted(manifest.run_id, reason)
        else:
            request.store.mark_failed(manifest.run_id, reason)
    except Exception as error:  # the error that ended the run is the one to raise
        log.warning("could not mark the run in its store", run_id=manifest.run_id, state=state, error=redact_text(str(error)))
    if folder is not None:
        folder.ended(manifest.run_id, state, reason)


def _announce(request: RunRequest[SummaryT], folder: OutputFolder | None, manifest: RunManifest) -> None:
    if request.announce is None:
        return
    run_plan = request.announce(manifest)
    if run_plan is not None and folder is not None:
        folder.add(manifest.run_id, PLAN_FILE, run_plan.model_dump_json(indent=1))


def _progress(request: RunRequest[SummaryT], manifest: RunManifest) -> str:
    stored = request.store.get_run(manifest.run_id)
    return stored.progress_text() if stored else ""


def _write_outputs(folder: OutputFolder | None, request: RunRequest[SummaryT], summary: SummaryT) -> tuple[Path | None, list[Path]]:
    if folder is None:
        return None, []
    summary_path = folder.path / "summary.json"
    write_text_atomically(summary_path, summary.to_json())
    reports = request.report.write(summary, folder.path) if request.report else []
    folder.written(summary.run_id, summary.benchmark, [summary_path, *reports])
    return summary_path, reports


def _repair(folder: OutputFolder, request: RunRequest[SummaryT]) -> RunResult | None:
    """Write the files of a run that finished in the store but was killed before they were written
    (from its stored summary: nothing is scored). The repaired run, or None."""
    entry = folder.journal()
    run_id = entry.get("run_id")
    if entry.get("state") != "running" or not run_id or entry.get("benchmark") != request.benchmark:
        return None
    stored = request.store.get_run(run_id)
    payload = request.store.load_summary(run_id) if stored is not None and stored.status == "finished" else None
    if payload is None:
        return None
    log.info("writing the files of a finished run that a kill left unwritten", run_id=run_id)
    try:
        summary = request.summary_model.model_validate(payload)
        summary_path, reports = _write_outputs(folder, request, summary)
    except Exception as error:  # never let an old run's files stop a new run
        log.warning("could not write the files of an earlier finished run", run_id=run_id, error=str(error))
        return None
    return RunResult(run_id, summary_path, reports, summary)


def _model_block(ctx: RunContext) -> dict[str, Any]:  # Any: the summary's JSON model block
    """Identity of every model port the run actually built."""
    block: dict[str, Any] = {}  # Any: JSON
    ports = ctx.ports
    lazies: dict[str, Lazy[Any]] = {  # Any: each port's own type
        "scorer": ports.scorer, "pseudo_scorer": ports.pseudo_scorer, "generator": ports.generator, "judge": ports.judge,
        "templater": ports.templater,
    }
    for name, lazy in lazies.items():
        if not lazy.built:
            continue
        port = lazy.get()
        identity = port.identity if isinstance(port, Identified) else None
        if identity is not None:
            block[name] = identity.model_dump()
        provenance = port.provenance if isinstance(port, Described) else None
        if provenance is not None:
            block[f"{name}_provenance"] = provenance.model_dump()
        findings = port.probe_findings if name == "scorer" and isinstance(port, ProbeReporting) else None
        if findings:
            block["scorer_probe"] = dict(findings)
        use = port.template_use if name == "templater" and isinstance(port, TemplateAccounting) else None
        if use is not None:
            block["chat_template"] = use.model_dump()
    return block
