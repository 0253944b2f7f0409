"""Wiring of ``culturebias export RUN --format mlflow|model-card|every-eval-ever`` (and the MLflow evaluator's run).

A run is named as ``compare`` names one (folder, summary.json, or run id with a store); its
benchmark's descriptor gives the headlines and title, its store the items, ``--verdict`` a
policy verdict (``culturebias check --json``) for the model card.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from culturebias.adapters.governance.exported_run import ExportedRun
from culturebias.adapters.install.optional_modules import import_modules
from culturebias.adapters.policy.verdict_files import read_verdict
from culturebias.application.out_folder import write_text_atomically
from culturebias.application.compare_runs import RunRef, StoreRef, load_runs
from culturebias.bootstrap.archive import ARCHIVE
from culturebias.bootstrap.registry import registry
from culturebias.application.compared_items import compared_items
from culturebias.domain.errors import ConfigError
from culturebias.domain.policy.verdict import PolicyVerdict
from culturebias.domain.summary import RunSummary

GOVERNANCE_FORMATS = ("mlflow", "model-card", "every-eval-ever")


def exported_run(run: RunRef, store: StoreRef | None = None, verdict: PolicyVerdict | None = None) -> ExportedRun:
    summary = load_runs([run], store, ARCHIVE)[0]
    descriptor = registry().benchmark(summary.benchmark)
    folder = None
    if not isinstance(run, RunSummary) and Path(run).expanduser().exists():
        path = Path(run).expanduser()
        folder = path if path.is_dir() else path.parent
    if verdict is not None and summary.run_id not in {r.run_id for r in verdict.runs}:
        raise ConfigError(f"the verdict ({verdict.policy}) was not checked on run {summary.run_id}")
    return ExportedRun(
        summary=summary,
        title=descriptor.title,
        culture=descriptor.culture,
        headlines=descriptor.headline_metrics(),
        folder=folder,
        items=compared_items([run], [summary], store, ARCHIVE)(summary.run_id),
        verdict=verdict,
    )


def export_governance(
    run: RunRef,
    format: str,
    *,
    out: str | Path | None = None,
    store: StoreRef | None = None,
    tracking_uri: str | None = None,
    experiment: str = "culturebias",
    verdict: str | Path | PolicyVerdict | None = None,
) -> list[str]:
    """Export a run in a governance tool's format; returns the files written (Every Eval Ever: the document and
    its samples file), or the MLflow run id."""
    if format not in GOVERNANCE_FORMATS:
        raise ConfigError(f"unknown governance format {format!r} (choose one of: {', '.join(GOVERNANCE_FORMATS)})")
    checked = read_verdict(verdict) if isinstance(verdict, (str, Path)) else verdict
    if format == "mlflow":
        import_modules("export --format mlflow", ("mlflow",), "governance")
        from culturebias.adapters.governance.mlflow_tracking import export_to_mlflow

        return [export_to_mlflow(exported_run(run, store, checked), tracking_uri, experiment)]
    if out is None:
        raise ConfigError(f"--format {format} writes a file: give --out FILE")
    exported = exported_run(run, store, checked)
    if format == "model-card":
        import_modules("export --format model-card", ("huggingface_hub",), "governance")
        from culturebias.adapters.governance.model_card import model_card_text

        write_text_atomically(Path(out).expanduser(), model_card_text(exported))
        return [str(out)]
    from culturebias.adapters.governance.every_eval_ever import write_every_eval_ever

    return [str(path) for path in write_every_eval_ever(exported, Path(out).expanduser())]


def governance_command(args: Any) -> int:  # Any: argparse's Namespace
    """``culturebias export RUN --format mlflow|model-card|every-eval-ever``."""
    written = export_governance(
        args.run, args.format, out=args.out, store=args.store, tracking_uri=args.tracking_uri,
        experiment=args.experiment, verdict=args.verdict,
    )
    if args.format == "mlflow":
        print(f"mlflow run: {written[0]}")
    else:
        for path in written:
            print(f"written: {path}")
    return 0

