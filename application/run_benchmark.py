"""Run orchestration: one benchmark, one run id, transactional and resumable.

1. fingerprint the data and the configuration;
2. open a new run, or with ``resume`` the newest unfinished run of the same
   benchmark, configuration and data;
3. let the service check the backend's capabilities and return its frozen plan, before anything is scored;
4. run the service with that plan (its ports store every result as it goes);
5. build the typed summary, write ``summary.json`` atomically, then the report.

``summary.json`` appears only when the whole run succeeded.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import structlog

import culturebias
from culturebias.application.context import RunContext
from culturebias.domain.errors import ResumeMismatchError
from culturebias.domain.runs import RunManifest, utc_now
from culturebias.domain.summary import SUMMARY_SCHEMA_VERSION, RunSummary
from culturebias.ports.datasets import DatasetSource
from culturebias.ports.reporting import ReportWriter
from culturebias.ports.results import ResultStore

log = structlog.get_logger("culturebias.run")


@dataclass
class RunRequest:
    benchmark: str
    service: Any  # a BenchmarkService instance
    summary_model: type[RunSummary]
    source: DatasetSource
    store: ResultStore
    report: ReportWriter | None
    out_dir: Path | None  # None: the summary lives in the store only (no files written)
    config: dict[str, Any]  # the effective configuration, secrets already redacted
    config_fingerprint: str
    resume: bool = False


@dataclass
class RunResult:
    run_id: str
    summary_path: Path | None
    report_paths: list[Path]
    summary: RunSummary


def _open_run(request: RunRequest, data_fingerprint: str) -> RunManifest:
    store = request.store
    if request.resume:
        candidates = [m for m in store.find_runs(request.benchmark) if m.status != "finished"]
        matching = [
            m
            for m in candidates
            if m.config_fingerprint == request.config_fingerprint and m.data_fingerprint == data_fingerprint
        ]
        if matching:
            manifest = max(matching, key=lambda m: m.created_at)
            log.info("resuming run", run_id=manifest.run_id, stored_since=manifest.created_at)
            return manifest
        if candidates:
            newest = max(candidates, key=lambda m: m.created_at)
            raise ResumeMismatchError(
                f"--resume: unfinished run {newest.run_id} has a different "
                + ("configuration" if newest.config_fingerprint != request.config_fingerprint else "data")
                + f" (stored {newest.config_fingerprint}/{newest.data_fingerprint}, now "
                f"{request.config_fingerprint}/{data_fingerprint}); run without --resume to start afresh"
            )
        log.info("nothing to resume; starting a new run")
    manifest = RunManifest(
        run_id=f"{request.benchmark}-{uuid.uuid4().hex[:12]}",
        benchmark=request.benchmark,
        config=request.config,
        config_fingerprint=request.config_fingerprint,
        data_fingerprint=data_fingerprint,
    )
    store.create_run(manifest)
    return manifest


def write_text_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run_benchmark(request: RunRequest, make_context: Callable[[str], RunContext]) -> RunResult:
    """``make_context(run_id) -> RunContext`` builds the ports for this run."""
    data_fingerprint = request.source.fingerprint()
    dataset = request.source.load()
    manifest = _open_run(request, data_fingerprint)
    ctx = make_context(manifest.run_id)
    structlog.contextvars.bind_contextvars(run_id=manifest.run_id, benchmark=request.benchmark)
    try:
        plan = request.service.preflight(ctx)
        outcome = request.service.run(ctx, dataset, plan)
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
                "metrics": outcome.metrics,
                "counts": outcome.counts,
                "notes": outcome.notes,
                "details": outcome.details,
            }
        )
        summary_path = None
        reports: list[Path] = []
        if request.out_dir is not None:
            summary_path = request.out_dir / "summary.json"
            write_text_atomically(summary_path, summary.to_json())
            reports = request.report.write(summary, request.out_dir) if request.report else []
        request.store.finish_run(manifest.run_id, summary.as_dict())
        log.info("run finished", summary=str(summary_path) if summary_path else "in the store")
        return RunResult(manifest.run_id, summary_path, reports, summary)
    except BaseException as error:
        request.store.mark_failed(manifest.run_id, f"{type(error).__name__}: {error}")
        raise
    finally:
        structlog.contextvars.unbind_contextvars("run_id", "benchmark")


def _model_block(ctx: RunContext) -> dict[str, Any]:
    """Identity of every model port the run actually built."""
    block: dict[str, Any] = {}
    for name in ("scorer", "pseudo_scorer", "generator", "judge", "templater"):
        lazy = getattr(ctx.ports, name)
        if lazy.built:
            port = lazy.get()
            identity = getattr(port, "identity", None)
            if identity is not None:
                block[name] = identity.model_dump()
            provenance = getattr(port, "provenance", None)
            if provenance is not None:
                block[f"{name}_provenance"] = provenance.model_dump()
    return block
