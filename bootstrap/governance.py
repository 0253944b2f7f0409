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


def evalhub_runner(spec: Any) -> Any:  # Any: eval-hub's JobSpec in, the adapter's CheckedJob out (optional extra)
    """An eval-hub job as a culturebias run, checked with its policy (``CultureBiasAdapter``'s default runner).

    ``spec.parameters``: ``run`` (a finished run folder: checked and reported, nothing is run) or ``options``
    (``protocol.*``), ``model`` (culturebias's model section; default: the job's endpoint through the ``openai``
    backend), ``data``, ``out`` (the run folder, default ``./culturebias-<job id>``); ``policy`` (a ``.toml`` or
    ``.feature`` file, or the TOML form as a dict). ``spec.num_examples`` is ``protocol.limit`` unless given.
    The benchmark name and the policy are checked before a model is asked anything.
    """
    import culturebias
    from culturebias.adapters.governance.evalhub_adapter import CheckedJob
    from culturebias.bootstrap.check import check, load_policy

    params = dict(spec.parameters)
    registry().benchmark(spec.benchmark_id)  # an unknown name fails here, naming the known ones
    for key in ("options", "model"):
        if params.get(key) is not None and not isinstance(params[key], dict):
            raise ConfigError(f"eval-hub job {spec.id}: parameters.{key} must be an object, not {params[key]!r}")
    policy = load_policy(params["policy"]) if params.get("policy") is not None else None
    run_dir = params.get("run")
    if run_dir is None:
        options = dict(params.get("options") or {})
        if spec.num_examples is not None:
            options.setdefault("limit", spec.num_examples)
        model = params.get("model") or {"backend": "openai", "path": spec.model.name, "api_base": spec.model.url or None}
        run_dir = params.get("out") or f"culturebias-{spec.id}"
        culturebias.evaluate(spec.benchmark_id, model=model, data=params.get("data"), options=options or None, out=run_dir)
    verdict = check(policy, [run_dir]) if policy is not None else None
    job = CheckedJob(run=exported_run(run_dir, verdict=verdict), policy=policy, verdict=verdict)
    if job.run.summary.benchmark != spec.benchmark_id:
        raise ConfigError(
            f"eval-hub job {spec.id}: parameters.run {run_dir} is a {job.run.summary.benchmark} run, "
            f"the job asks for {spec.benchmark_id}"
        )
    return job


def evalhub_main() -> int:
    """The eval-hub job pod's entry point (``culturebias-evalhub``): read the job spec, run, report the results.

    Its exit code is the ``culturebias`` command's (``bootstrap/exit_codes.py``), a failure one line on stderr:
    0 results reported; 2 the job spec (``EVALHUB_JOB_SPEC_PATH``) missing or invalid, an unknown benchmark, the
    ``evalhub`` extra not installed; 3 a policy or data that cannot be used; 1 a model endpoint that cannot be
    reached (another culturebias error); 130/143 interrupted.
    """
    from culturebias.bootstrap.exit_codes import run_guarded

    return run_guarded(_evalhub_job, prog="culturebias-evalhub")


def _evalhub_job() -> int:
    import_modules("the eval-hub adapter (culturebias-evalhub)", ("evalhub",), "evalhub")
    from evalhub.adapter import DefaultCallbacks

    from culturebias.adapters.governance.evalhub_adapter import job_adapter
    from culturebias.bootstrap.logging import configure_logging, logging_restored

    with logging_restored():
        configure_logging()  # console lines on stderr, as the culturebias command's
        adapter = job_adapter(evalhub_runner)
        callbacks = DefaultCallbacks.from_adapter(adapter)
        results = adapter.run_benchmark_job(adapter.job_spec, callbacks)
        callbacks.report_results(results)
    print(f"culturebias-evalhub: job {results.id}: {len(results.results)} results reported ({results.benchmark_id})")
    return 0
