"""Run orchestration: recorded ports dedupe and resume; a failed run writes no summary."""

from __future__ import annotations

import json
from pathlib import Path
from dataclasses import dataclass
from typing import Literal

import pytest
from pydantic import BaseModel

from culturebias.adapters.scripted.backend import ScriptedScorer, ScriptedTemplater
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.application.context import RunContext
from culturebias.application.run_benchmark import RunRequest, run_benchmark
from culturebias.domain.errors import CapabilityError, ResumeMismatchError
from culturebias.domain.requests import LoglikelihoodRequest
from culturebias.domain.summary import Block, Number, ProtocolOutcome, RunSummary
from culturebias.testing.context import fake_context


class Options(BaseModel):
    fail_after_chunks: int | None = None


class ToyMetrics(Block):
    mean_logprob: Number
    nan: Number


class ToyCounts(Block):
    n: int


class ToyDetails(Block):
    pass


class ToySummary(RunSummary):
    benchmark: Literal["toy"]
    metrics: ToyMetrics
    counts: ToyCounts
    details: ToyDetails


@dataclass(frozen=True)
class ToyPlan:
    context: str


class SumService:
    """A toy protocol: scores every sentence under one context and reports the mean log-probability."""

    def __init__(self, options: Options, capable: bool = True):
        self.options = options
        self.capable = capable

    def preflight(self, ctx: RunContext) -> ToyPlan:
        if not self.capable:
            raise CapabilityError("scripted", "prompt log-probabilities")
        return ToyPlan("ctx:")

    def run(self, ctx: RunContext, dataset: list[str], plan: ToyPlan) -> ProtocolOutcome[ToyMetrics, ToyCounts, ToyDetails]:
        requests = [LoglikelihoodRequest(plan.context, s) for s in dataset]
        results = ctx.scorer().loglikelihood(requests)
        mean = sum(r.logprob for r in results) / len(results)
        return ProtocolOutcome(
            metrics=ToyMetrics(mean_logprob=mean, nan=float("nan")), counts=ToyCounts(n=len(results)), details=ToyDetails()
        )


class ListSource:
    def __init__(self, rows: list[str]):
        self.rows = rows

    def describe(self) -> str:
        return "in-memory list"

    def fingerprint(self) -> str:
        return str(len(self.rows)) + self.rows[0]

    def load(self) -> list[str]:
        return self.rows


class Exploding:
    """A scorer that dies after N batches, like a killed process."""

    def __init__(self, inner: ScriptedScorer, batches: int):
        self.inner = inner
        self.left = batches

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def loglikelihood(self, requests, progress=None):
        if self.left == 0:
            raise KeyboardInterrupt("killed")
        self.left -= 1
        return self.inner.loglikelihood(requests, progress)


def rule(context: str, continuation: str) -> float:
    return -float(len(continuation))


def make_request(tmp_path: Path, rows: list[str], resume: bool = False, config=None, service=None) -> RunRequest:
    return RunRequest(
        benchmark="toy",
        service=service or SumService(Options()),
        summary_model=ToySummary,
        source=ListSource(rows),
        store=SQLiteResultStore(tmp_path / "results.sqlite"),
        report=None,
        out_dir=tmp_path / "out",
        config=config or {"k": 1},
        config_fingerprint=json.dumps(config or {"k": 1}),
        resume=resume,
    )


def context_factory(scorer, store_holder: list):
    def make(run_id: str) -> RunContext:
        return fake_context(scorer=scorer, templater=ScriptedTemplater, store=store_holder[0], run_id=run_id, chunk_size=3)

    return make


def run(tmp_path, rows, scorer, **kwargs):
    request = make_request(tmp_path, rows, **kwargs)
    return run_benchmark(request, context_factory(scorer, [request.store])), request


ROWS = ["a", "bb", "ccc", "bb", "dddd", "eeeee", "a", "ffffff"]


def test_duplicates_are_scored_once_and_results_keep_request_order(tmp_path):
    scorer = ScriptedScorer(rule)
    result, _ = run(tmp_path, ROWS, scorer)
    assert sum(scorer.calls) == 6  # 8 requests, 6 distinct
    assert scorer.calls == [3, 3]  # chunks of run.chunk_size
    expected = sum(-len(r) for r in ROWS) / len(ROWS)
    assert result.summary.metrics.mean_logprob == pytest.approx(expected)
    assert result.summary.metrics.nan is None  # NaN becomes null, never invalid JSON
    on_disk = json.loads(result.summary_path.read_text(encoding="utf-8"))
    assert on_disk == result.summary.as_dict() and on_disk["metrics"]["nan"] is None
    assert ToySummary.model_validate(on_disk) == result.summary
    assert on_disk["model"]["scorer"]["backend"] == "scripted"
    assert on_disk["model"]["scorer_provenance"]["dtype"] == "float64"


def test_a_killed_run_resumes_without_rescoring_stored_chunks(tmp_path):
    dying = Exploding(ScriptedScorer(rule), batches=1)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, ROWS, dying)
    assert not (tmp_path / "out" / "summary.json").exists(), "a killed run must not leave a summary"
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    [failed] = store.find_runs("toy")
    assert failed.status == "failed"
    assert len(store.load_results(failed.run_id, "loglikelihood")) == 3

    fresh = ScriptedScorer(rule)
    result, _ = run(tmp_path, ROWS, fresh, resume=True)
    assert result.run_id == failed.run_id
    assert fresh.calls == [3], "only the three unscored sentences are scored again"
    assert result.summary.metrics.mean_logprob == pytest.approx(sum(-len(r) for r in ROWS) / len(ROWS))


def test_resume_refuses_a_run_with_another_configuration(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, ROWS, Exploding(ScriptedScorer(rule), batches=1))
    with pytest.raises(ResumeMismatchError, match="configuration"):
        run(tmp_path, ROWS, ScriptedScorer(rule), resume=True, config={"k": 2})


def test_without_resume_a_new_run_starts(tmp_path):
    first, _ = run(tmp_path, ROWS, ScriptedScorer(rule))
    scorer = ScriptedScorer(rule)
    second, _ = run(tmp_path, ROWS, scorer)
    assert first.run_id != second.run_id
    assert sum(scorer.calls) == 6


def test_capability_is_checked_before_anything_is_scored(tmp_path):
    scorer = ScriptedScorer(rule)
    with pytest.raises(CapabilityError, match="prompt log-probabilities"):
        run(tmp_path, ROWS, scorer, service=SumService(Options(), capable=False))
    assert scorer.calls == []
    assert not (tmp_path / "out" / "summary.json").exists()


def test_a_different_model_identity_changes_every_cache_key(tmp_path):
    from culturebias.application.recorded_ports import request_key

    request = LoglikelihoodRequest("ctx:", "a")
    a = ScriptedScorer(rule, name="model-a").identity.cache_key()
    b = ScriptedScorer(rule, name="model-b").identity.cache_key()
    assert request_key(a, request) != request_key(b, request)
    assert request_key(a, request) == request_key(a, LoglikelihoodRequest("ctx:", "a"))
    assert request_key(a, request) != request_key(a, LoglikelihoodRequest("ctx: ", "a"))


def test_the_service_keeps_no_state_between_runs(tmp_path):
    service = SumService(Options())
    before = dict(vars(service))
    first, _ = run(tmp_path, ROWS, ScriptedScorer(rule), service=service)
    second, _ = run(tmp_path, ROWS[:3], ScriptedScorer(rule), service=service)
    assert vars(service) == before
    assert (first.summary.counts.n, second.summary.counts.n) == (8, 3)


def test_a_summary_that_does_not_fit_its_model_is_never_written(tmp_path):
    class Wrong(SumService):
        def run(self, ctx, dataset, plan):
            outcome = super().run(ctx, dataset, plan)
            return ProtocolOutcome(metrics=outcome.metrics, counts=ToyDetails(), details=ToyDetails())

    with pytest.raises(Exception, match="counts"):
        run(tmp_path, ROWS, ScriptedScorer(rule), service=Wrong(Options()))
    assert not (tmp_path / "out" / "summary.json").exists()
