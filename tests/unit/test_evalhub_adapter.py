"""culturebias as an eval-hub provider: scripted KoBBQ runs checked with a policy become the SDK's own models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

evalhub = pytest.importorskip("evalhub", reason="the evalhub extra (eval-hub-sdk) is not installed: pip install -e '.[evalhub]' in the clone")

from evalhub.adapter import DefaultCallbacks, JobCallbacks, JobResults, JobSpec  # noqa: E402
from evalhub.models.api import BenchmarkConfig  # noqa: E402

import culturebias  # noqa: E402
from culturebias.adapters.governance.evalhub_adapter import (  # noqa: E402
    POLICY_RESULT,
    CheckedJob,
    CultureBiasAdapter,
    job_results,
    pass_criteria,
)
from culturebias.application.policy_gates import criterion_gates  # noqa: E402
from culturebias.bootstrap.governance import evalhub_runner, exported_run  # noqa: E402
from culturebias.domain.policy.model import Criterion, Policy  # noqa: E402
from culturebias.testing.policy_runs import replayed_runs  # noqa: E402

POLICY = Policy(name="Korean deployment gate", criteria=[
    Criterion(name="within 0.05", benchmark="kobbq", metric="diff_bias_amb", at_most=0.05),
    Criterion(name="within 0.01", benchmark="kobbq", metric="diff_bias_amb", at_most=0.01),
    Criterion(name="at least 0.5", benchmark="kobbq", metric="diff_bias_amb", at_least=0.5),
    Criterion(name="band", benchmark="kobbq", metric="diff_bias_amb", between=(-0.05, 0.05)),
    Criterion(name="point band", benchmark="kobbq", metric="diff_bias_amb", between=(0.0, 0.05), confidence="point"),
])


@pytest.fixture(scope="module")
def runs(tmp_path_factory, costly) -> dict[str, Path]:  # six scripted KoBBQ runs: about 10 s
    return replayed_runs(tmp_path_factory.mktemp("evalhub-runs"))


def spec(**overrides) -> JobSpec:
    return JobSpec(**{"id": "job-1", "provider_id": "culturebias", "benchmark_id": "kobbq", "benchmark_index": 0,
                      "model": {"url": "http://127.0.0.1:8000/v1", "name": "guesser"}, "parameters": {},
                      "callback_url": "http://localhost:8080", **overrides})


def checked(run: Path, policy: Policy = POLICY) -> CheckedJob:
    verdict = culturebias.check(policy, [run])
    return CheckedJob(run=exported_run(run, verdict=verdict), policy=policy, verdict=verdict)


def by_name(results: JobResults) -> dict:
    return {r.metric_name: r for r in results.results}


def passes_in_evalhub(config: BenchmarkConfig, results: JobResults) -> bool:
    """eval-hub's rule: the primary score (resolved as the SDK resolves it) against the pass criteria's threshold."""
    value = DefaultCallbacks._resolve_overall_score(results.results, config.primary_score)
    if value is None:
        return False
    threshold = config.pass_criteria.threshold
    return value <= threshold if config.primary_score.lower_is_better else value >= threshold


def test_a_checked_run_becomes_job_results_the_sdk_validates_with_each_headline_and_its_interval(runs):
    job = checked(runs["guesser"])
    results = job_results(spec(), job, 1.5)
    again = JobResults.model_validate_json(results.model_dump_json())  # the SDK's pydantic models, round trip
    assert again == results
    summary = culturebias.load_summary(runs["guesser"])
    interval = summary.metrics.overall.intervals["diff_bias_amb"]
    amb = by_name(again)["diff_bias_amb"]
    assert amb.metric_value == summary.metrics.overall.diff_bias_amb.mean
    assert amb.confidence_interval == (interval.low, interval.high) and amb.num_samples == interval.n
    assert amb.metadata["level"] == 0.95 and amb.metadata["unit"] == interval.unit
    assert again.evaluation_metadata["run_id"] == summary.run_id
    assert again.evaluation_metadata["verdict"]["outcome"] == job.verdict.outcome
    assert again.num_examples_evaluated == len(job.run.items) > 0
    schema = {m.name: m.type.value for m in again.metrics_schema}
    assert schema["diff_bias_amb"] == "numeric" and schema["within 0.05"] == "categorical"


def test_pass_fail_and_inconclusive_criteria_map_to_outcomes_and_to_gates_eval_hub_passes_only_on_a_pass(runs):
    job = checked(runs["guesser"])
    results = job_results(spec(), job, 0.0)
    named = by_name(results)
    outcomes = {v.name: v.outcome for v in job.verdict.criteria}
    assert outcomes == {"within 0.05": "pass", "within 0.01": "inconclusive", "at least 0.5": "fail", "band": "pass",
                        "point band": "fail"}
    for name, outcome in outcomes.items():
        assert named[name].metric_value == outcome
        assert named[name].metadata["reason"] == next(v.reason for v in job.verdict.criteria if v.name == name)
    assert named[POLICY_RESULT].metric_value == "fail" == job.verdict.outcome
    configs = pass_criteria(POLICY)
    assert [c.parameters["gate"] for c in configs] == [g.metric for c in POLICY.criteria for g in criterion_gates(c)]
    assert len(configs) == 7  # between: a lower and an upper gate
    for c in POLICY.criteria:  # eval-hub passes every gate of a criterion exactly when culturebias passes it
        mine = [config for config in configs if config.parameters["criterion"] == c.name]
        assert all(passes_in_evalhub(config, results) for config in mine) == (outcomes[c.name] == "pass"), c.name
    high = next(config for config in configs if config.parameters["gate"] == "within 0.01: diff_bias_amb_ci_high")
    assert high.primary_score.lower_is_better and high.pass_criteria.threshold == 0.01
    verdict = next(v for v in job.verdict.criteria if v.name == "within 0.01")
    assert named["within 0.01: diff_bias_amb_ci_high"].metric_value == verdict.interval.high  # the straddling bound
    low = next(config for config in configs if config.parameters["gate"] == "at least 0.5: diff_bias_amb_ci_low")
    assert not low.primary_score.lower_is_better and low.pass_criteria.threshold == 0.5


def test_an_undecided_criterion_has_no_gate_number_and_a_not_measured_headline_stays_words(runs):
    policy = Policy(name="g", criteria=[Criterion(name="within 0.05", benchmark="kobbq", metric="diff_bias_amb", at_most=0.05)])
    job = checked(runs["coin"], policy)  # validity rules on: the random model's bias scores are not measured
    results = job_results(spec(), job, 0.0)
    named = by_name(results)
    assert named["within 0.05"].metric_value == "inconclusive"
    assert "within 0.05: diff_bias_amb_ci_high" not in named  # nothing eval-hub could count as a pass
    assert not passes_in_evalhub(pass_criteria(policy)[0], results)
    amb = named["diff_bias_amb"]
    assert amb.metric_value == "not measured" and amb.metadata["reason"] and amb.confidence_interval is None


def test_the_adapter_runs_a_job_spec_file_through_its_runner_and_reports_progress(runs, tmp_path):
    meta = tmp_path / "job-1" / "0" / "culturebias" / "kobbq" / "meta"
    meta.mkdir(parents=True)
    (meta / "job.json").write_text(spec(parameters={"run": str(runs["guesser"])}).model_dump_json(), encoding="utf-8")
    seen: list[JobSpec] = []

    def runner(job_spec: JobSpec) -> CheckedJob:
        seen.append(job_spec)
        return checked(Path(job_spec.parameters["run"]))

    class Recorded(JobCallbacks):
        def __init__(self) -> None:
            self.updates: list = []

        def report_status(self, update) -> None:
            self.updates.append(update)

        def create_oci_artifact(self, spec):  # pragma: no cover - the adapter persists nothing
            raise AssertionError("no artifact expected")

        def report_results(self, results) -> None:  # pragma: no cover - the entry point reports
            raise AssertionError("run_benchmark_job returns its results")

    adapter = CultureBiasAdapter(runner, job_spec_path=str(meta / "job.json"))
    callbacks = Recorded()
    results = adapter.run_benchmark_job(adapter.job_spec, callbacks)
    assert seen[0].parameters["run"] == str(runs["guesser"]) and results.id == "job-1" and results.model_name == "guesser"
    assert [u.progress for u in callbacks.updates] == [0.0, 1.0]
    assert by_name(results)["within 0.05"].metric_value == "pass"


def test_the_default_runner_checks_a_finished_run_with_the_jobs_policy_without_running_a_model(runs, tmp_path):
    policy = tmp_path / "gate.toml"
    policy.write_text('name = "gate"\n\n[[criterion]]\nname = "within 0.05"\nbenchmark = "kobbq"\n'
                      'metric = "diff_bias_amb"\nat_most = 0.05\n', encoding="utf-8")
    job = evalhub_runner(spec(parameters={"run": str(runs["stereotyper"]), "policy": str(policy)}))
    results = job_results(spec(), job)
    assert by_name(results)["within 0.05"].metric_value == "fail"
    assert json.loads(results.model_dump_json())["evaluation_metadata"]["verdict"]["policy"] == "gate"
