"""culturebias as an eval-hub evaluation provider: a ``FrameworkAdapter``, results in eval-hub's schema, a policy's
criteria as eval-hub's pass criteria (the optional extra ``evalhub``: ``pip install -e '.[evalhub]'`` in the clone).

- ``job_results(spec, run)``: a finished run (and the policy verdict ``check`` gave on it) as eval-hub's
  ``JobResults``: each headline metric an ``EvaluationResult`` with its 95 % interval (``confidence_interval``),
  ``num_samples`` = the interval's resampling units, the run's caveats; each criterion's gates
  (``application.policy_gates``: the interval bound the criterion is decided on) as numbers and its outcome
  (pass, fail, inconclusive) and reason as a categorical result; the verdict whole in ``evaluation_metadata``.
- ``pass_criteria(policy)``: each gate as an eval-hub ``BenchmarkConfig`` with its ``PrimaryScore`` (the gate's
  metric, which way is better) and ``PassCriteria`` (the threshold): eval-hub's one-threshold rule on the gate
  is culturebias's whole-interval rule on the criterion; an undecided criterion has no gate number, so it never
  passes there.
- ``CultureBiasAdapter``: the job runner eval-hub starts; it runs the job's benchmark through a ``runner``
  (composed in ``bootstrap.governance.evalhub_runner``: ``culturebias.evaluate`` on the job's model endpoint,
  then ``culturebias.check`` with the policy of ``parameters["policy"]``) and maps what it returns; a runner that
  fails reports the job FAILED to eval-hub with the error's message, then raises it.
- ``job_adapter(runner)``: the adapter for the job spec eval-hub wrote (``EVALHUB_JOB_SPEC_PATH``), or a
  ``ConfigError`` in one line naming the file and what is wrong with it (missing, not JSON, a field the SDK's
  ``JobSpec`` refuses).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalhub.adapter import (
    EvaluationResult,
    FrameworkAdapter,
    JobCallbacks,
    JobPhase,
    JobResults,
    JobSpec,
    JobStatus,
    JobStatusUpdate,
    MessageInfo,
)
from evalhub.adapter.settings import AdapterSettings
from evalhub.models.api import BenchmarkConfig, MetricSchema, PassCriteria, PrimaryScore, ResultType
from pydantic import ValidationError

from culturebias.adapters.governance.exported_run import ExportedRun, Headline
from culturebias.application.policy_gates import Gate, gate_value, policy_gates
from culturebias.domain.errors import ConfigError
from culturebias.domain.policy.model import Policy
from culturebias.domain.policy.verdict import PolicyVerdict

PROVIDER_ID = "culturebias"
POLICY_RESULT = "policy"  # the result naming the policy's outcome


@dataclass(frozen=True)
class CheckedJob:
    """What a runner returns: the finished run, and the policy and its verdict if the job named one."""

    run: ExportedRun
    policy: Policy | None = None
    verdict: PolicyVerdict | None = None


Runner = Callable[[JobSpec], CheckedJob]


def _headline_result(h: Headline, run: ExportedRun) -> EvaluationResult:
    caveats = [c.text for c in run.caveats_of(h.metric.name)]
    meta: dict[str, Any] = {"label": h.metric.label, "direction": h.metric.direction}  # Any: JSON values
    if h.metric.target is not None:
        meta["target"] = h.metric.target
    if caveats:
        meta["caveats"] = caveats
    if h.not_measured is not None:  # a failed validity rule: never a number (PROTOCOLS §6)
        return EvaluationResult(metric_name=h.metric.name, metric_value="not measured", metric_type="not_measured",
                                metadata={**meta, "reason": h.not_measured})
    assert h.value is not None
    interval = h.interval
    if interval is not None:
        meta.update(level=interval.level, unit=interval.unit, method=interval.method)
        if interval.note:
            meta["interval_note"] = interval.note
    return EvaluationResult(
        metric_name=h.metric.name, metric_value=float(h.value), metric_type="float",
        confidence_interval=h.bounds(), num_samples=interval.n if interval is not None else None, metadata=meta,
    )


def headline_results(run: ExportedRun) -> list[EvaluationResult]:
    """Each headline metric the run has, with its interval, n and caveats (a not-measured one says why)."""
    return [_headline_result(h, run) for h in run.headline_values() if h.value is not None or h.not_measured]


def _gate_meta(gate: Gate) -> dict[str, Any]:  # Any: JSON values
    return {"criterion": gate.criterion, "threshold": gate.threshold, "lower_is_better": gate.lower_is_better,
            "bound": gate.bound}


def verdict_results(policy: Policy, verdict: PolicyVerdict) -> list[EvaluationResult]:
    """Per criterion: its gates' numbers (where it was decided on one) and its outcome with the reason; then the
    policy's outcome."""
    by_name = {v.name: v for v in verdict.criteria}
    gates = policy_gates(policy)
    out: list[EvaluationResult] = []
    for c in policy.criteria:
        v = by_name[c.name]
        for gate in (g for g in gates if g.criterion == c.name):
            value = gate_value(gate, v)
            if value is not None:
                out.append(EvaluationResult(
                    metric_name=gate.metric, metric_value=float(value), metric_type="float",
                    num_samples=v.n, metadata={**_gate_meta(gate), "passes": gate.passes(value), "outcome": v.outcome},
                ))
        interval = v.interval
        bounds = (interval.low, interval.high) if interval is not None and interval.defined else None
        out.append(EvaluationResult(
            metric_name=c.name, metric_value=v.outcome, metric_type="outcome",
            confidence_interval=bounds if v.decided_on == "interval" else None, num_samples=v.n,
            metadata={"reason": v.reason, "metric": v.metric_label, "estimate": v.estimate, "value": v.value,
                      "decided_on": v.decided_on, "run_id": v.run_id, "baseline_run_id": v.baseline_run_id},
        ))
    out.append(EvaluationResult(
        metric_name=POLICY_RESULT, metric_value=verdict.outcome, metric_type="outcome",
        metadata={"policy": verdict.policy, **verdict.counts.model_dump()},
    ))
    return out


def _schema(results: list[EvaluationResult]) -> list[MetricSchema]:
    return [
        MetricSchema(name=r.metric_name,
                     type=ResultType.NUMERIC if isinstance(r.metric_value, float) else ResultType.CATEGORICAL)
        for r in results
    ]


def job_results(spec: JobSpec, job: CheckedJob, duration_seconds: float = 0.0) -> JobResults:
    """The eval-hub ``JobResults`` of a finished (and possibly checked) run."""
    run, s = job.run, job.run.summary
    results = headline_results(run)
    if job.verdict is not None:
        if job.policy is None:
            raise ValueError("a verdict is mapped with the policy it was checked with")
        results += verdict_results(job.policy, job.verdict)
    model, backend = run.model()
    metadata: dict[str, Any] = {  # Any: JSON values
        "culturebias_version": s.culturebias_version, "benchmark": s.benchmark, "title": run.title,
        "culture": run.culture, "run_id": s.run_id, "data_fingerprint": s.data.fingerprint,
        "config_fingerprint": s.config_fingerprint, "model": model, "backend": backend,
        "tags": run.run_tags(), "caveats": [c.model_dump() for c in run.caveats()],
    }
    if job.verdict is not None:
        metadata["verdict"] = job.verdict.model_dump(mode="json")
    return JobResults(
        id=spec.id, benchmark_id=spec.benchmark_id, benchmark_index=spec.benchmark_index, model_name=spec.model.name,
        results=results, num_examples_evaluated=len(run.items) if run.items is not None else 0,
        duration_seconds=duration_seconds, evaluation_metadata=metadata, metrics_schema=_schema(results),
        additional_info={"items": metadata["tags"].get("culturebias.items", "all"),
                         "caveats": [c.short for c in run.caveats()]},
    )


def pass_criteria(
    policy: Policy, parameters: Mapping[str, Any] | None = None, provider_id: str = PROVIDER_ID  # Any: JSON values
) -> list[BenchmarkConfig]:
    """Each gate of the policy as an eval-hub benchmark configuration with its primary score and pass criteria;
    ``parameters`` (the job's: ``policy``, ``options``, ``run`` ...) go into every one."""
    return [
        BenchmarkConfig(
            id=next(c.benchmark for c in policy.criteria if c.name == gate.criterion),
            provider_id=provider_id,
            parameters={**dict(parameters or {}), "policy_name": policy.name, "criterion": gate.criterion,
                        "gate": gate.metric},
            primary_score=PrimaryScore(metric=gate.metric, lower_is_better=gate.lower_is_better),
            pass_criteria=PassCriteria(threshold=gate.threshold),
        )
        for gate in policy_gates(policy)
    ]


class CultureBiasAdapter(FrameworkAdapter):
    """eval-hub's job runner for culturebias: runs the job's benchmark with ``runner`` and reports its results."""

    def __init__(self, runner: Runner, settings: Any = None, job_spec_path: str | None = None) -> None:  # Any: evalhub's AdapterSettings
        super().__init__(settings=settings, job_spec_path=job_spec_path)
        self._runner = runner

    def run_benchmark_job(self, config: JobSpec, callbacks: JobCallbacks) -> JobResults:
        started = time.monotonic()
        callbacks.report_status(JobStatusUpdate(
            status=JobStatus.RUNNING, phase=JobPhase.RUNNING_EVALUATION, progress=0.0,
            message=MessageInfo(message=f"culturebias: running {config.benchmark_id}", message_code="running"),
        ))
        try:
            job = self._runner(config)
        except Exception as error:  # eval-hub learns why the job failed; the entry point prints it and exits
            callbacks.report_status(JobStatusUpdate(
                status=JobStatus.FAILED, phase=JobPhase.RUNNING_EVALUATION,
                error_message=MessageInfo(message=f"culturebias: {error}", message_code="failed"),
            ))
            raise
        callbacks.report_status(JobStatusUpdate(
            status=JobStatus.RUNNING, phase=JobPhase.POST_PROCESSING, progress=1.0,
            message=MessageInfo(message=f"culturebias: run {job.run.summary.run_id} finished", message_code="finished"),
        ))
        return job_results(config, job, time.monotonic() - started)


JOB_SPEC_ENV = "EVALHUB_JOB_SPEC_PATH"


def _first_problem(error: ValidationError) -> str:
    problems = error.errors()
    first = problems[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return (f"field {where!r}: {first['msg']}" if where else str(first["msg"])) + more


def job_adapter(runner: Runner, job_spec_path: str | Path | None = None) -> CultureBiasAdapter:
    """The adapter for the job spec at ``job_spec_path`` (default: ``EVALHUB_JOB_SPEC_PATH``, else the SDK's default
    path); a ``ConfigError`` in one line when the file is missing, unreadable, not JSON or not a valid ``JobSpec``."""
    settings = AdapterSettings.from_env()
    if job_spec_path is not None:
        settings.job_spec_path = Path(job_spec_path)
    path = settings.resolved_job_spec_path
    where = f"eval-hub job spec {path}"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such file (set {JOB_SPEC_ENV} to the job.json eval-hub wrote)") from None
    except OSError as error:
        raise ConfigError(f"{where}: cannot be read ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{where}: not UTF-8 text") from None
    try:
        JobSpec.model_validate_json(text)
    except ValidationError as error:
        raise ConfigError(f"{where}: {_first_problem(error)}") from None
    return CultureBiasAdapter(runner, settings=settings)
