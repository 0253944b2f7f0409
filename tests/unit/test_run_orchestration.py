"""Run orchestration: recorded ports dedupe and resume; a failed run writes no summary."""

from __future__ import annotations

import json
from pathlib import Path
from dataclasses import dataclass
from typing import Literal

import pytest
from pydantic import BaseModel

from culturebias.testing.scripted import ScriptedScorer, ScriptedTemplater
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
        headlines=(),
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
    assert failed.status == "interrupted"
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


# --------------------------------------------------------------------------- durability


from dataclasses import replace  # noqa: E402

from culturebias.adapters.progress.reporters import NullProgress  # noqa: E402
from culturebias.application.recorded_ports import RecordedScorer  # noqa: E402
from culturebias.domain.requests import LoglikelihoodResult  # noqa: E402
from culturebias.domain.runs import RunInterrupted, StageProgress  # noqa: E402
from culturebias.ports.recording import BatchSink  # noqa: E402

WORDS = ["a", "bb", "ccc", "dddd", "ee", "f", "gggggg", "hhh", "ii", "jjjjj", "kk", "l"]


class BatchingScorer:
    """Batches like a real backend (longest first, two per batch), delivers each batch to a BatchSink,
    and scores with a term that depends on the batch, as float rounding does on real hardware."""

    def __init__(self, stop_after: int | None = None, signal: type[BaseException] = KeyboardInterrupt):
        self.inner = ScriptedScorer(rule)
        self.batches: list[tuple[str, ...]] = []
        self.stop_after = stop_after
        self.signal = signal

    identity = property(lambda self: self.inner.identity)
    provenance = property(lambda self: self.inner.provenance)

    def check_loglikelihood(self) -> None:
        pass

    def loglikelihood(self, requests, progress=None):
        sink = progress if isinstance(progress, BatchSink) else None
        known = {i: v for i in range(len(requests)) if sink is not None and (v := sink.known(i)) is not None}
        results = dict(known)
        order = sorted(range(len(requests)), key=lambda i: (-len(requests[i].continuation), requests[i].continuation))
        for start in range(0, len(order), 2):
            batch = order[start : start + 2]
            if all(i in known for i in batch):
                continue
            if self.stop_after is not None and len(self.batches) == self.stop_after:
                raise self.signal() if self.signal is KeyboardInterrupt else self.signal(15, "SIGTERM")
            self.batches.append(tuple(requests[i].continuation for i in batch))
            noise = 1e-9 * sum(len(requests[i].continuation) for i in batch)
            computed = {i: LoglikelihoodResult(rule("", requests[i].continuation) + noise, 1, True) for i in batch}
            results.update(computed)
            if progress is not None:
                progress.advance(len(batch))
            if sink is not None:
                sink.deliver(computed)
        return [results[i] for i in range(len(requests))]


def batching_run(tmp_path, scorer, *, resume=False, commit_seconds=1e9, chunk_size=6, store=None, config=None):
    request = make_request(tmp_path, WORDS, resume=resume, config=config)
    if store is not None:
        request.store = store

    def make(run_id: str) -> RunContext:
        ctx = fake_context(scorer=scorer, store=request.store, run_id=run_id, chunk_size=chunk_size)
        return replace(ctx, commit_seconds=commit_seconds)

    return run_benchmark(request, make), request.store


def stored_scores(store, run_id):
    return {k: (v["logprob"], v["n_tokens"]) for k, v in store.load_results(run_id, "loglikelihood").items()}


@pytest.mark.parametrize("stop_after", [1, 3, 4, 5])
@pytest.mark.parametrize("signal", [KeyboardInterrupt, RunInterrupted])
def test_an_interrupted_run_keeps_every_delivered_batch_and_resumes_to_identical_numbers(tmp_path, stop_after, signal):
    reference = BatchingScorer()
    expected, ref_store = batching_run(tmp_path / "ref", reference)
    assert len(reference.batches) == 6

    dying = BatchingScorer(stop_after=stop_after, signal=signal)
    with pytest.raises(KeyboardInterrupt):
        batching_run(tmp_path / "run", dying)
    store = SQLiteResultStore(tmp_path / "run" / "results.sqlite")
    [run] = store.find_runs("toy")
    assert run.status == "interrupted" and "interrupted" in (run.failure or "")
    stored = store.load_results(run.run_id, "loglikelihood")
    assert len(stored) == 2 * stop_after, "every batch computed before the interruption is stored"
    assert run.progress["loglikelihood"] == StageProgress(done=2 * stop_after, total=len(WORDS))

    fresh = BatchingScorer()
    resumed, store = batching_run(tmp_path / "run", fresh, resume=True, store=store)
    assert resumed.run_id == run.run_id
    assert fresh.batches == reference.batches[stop_after:], "the resumed run runs exactly the batches that were left"
    assert resumed.summary.metrics == expected.summary.metrics
    assert stored_scores(store, run.run_id) == stored_scores(ref_store, expected.run_id)
    finished = store.get_run(run.run_id)
    assert finished.status == "finished" and finished.failure is None
    assert finished.progress["loglikelihood"] == StageProgress(done=len(WORDS), total=len(WORDS))


def test_a_second_interruption_while_finishing_a_cut_chunk_still_resumes_identically(tmp_path):
    reference = BatchingScorer()
    expected, ref_store = batching_run(tmp_path / "ref", reference)
    with pytest.raises(KeyboardInterrupt):
        batching_run(tmp_path / "run", BatchingScorer(stop_after=1))
    with pytest.raises(KeyboardInterrupt):
        batching_run(tmp_path / "run", BatchingScorer(stop_after=1), resume=True)
    fresh = BatchingScorer()
    resumed, store = batching_run(tmp_path / "run", fresh, resume=True)
    assert fresh.batches == reference.batches[2:]
    assert resumed.summary.metrics == expected.summary.metrics
    assert stored_scores(store, resumed.run_id) == stored_scores(ref_store, expected.run_id)


class CountingStore(SQLiteResultStore):
    def __init__(self, path):
        super().__init__(path)
        self.saves: list[int] = []

    def save_results(self, run_id, stage, results, progress=None):
        if stage == "loglikelihood":
            self.saves.append(len(results))
        super().save_results(run_id, stage, results, progress)


def test_results_are_committed_by_time_as_batches_arrive(tmp_path):
    from culturebias.domain.runs import RunManifest

    store = CountingStore(tmp_path / "results.sqlite")
    store.create_run(RunManifest(run_id="r", benchmark="toy", config={}, config_fingerprint="c", data_fingerprint="d"))
    ticks = iter(range(0, 10**6, 2))  # every reading of the clock is 2 s later
    scorer = RecordedScorer(
        BatchingScorer(), store, "r", NullProgress(), chunk_size=1000, commit_seconds=5, clock=lambda: next(ticks)
    )
    requests = [LoglikelihoodRequest("", f"{w}{n}") for n in range(50) for w in WORDS]  # 2 % of 600 is 12 results
    scorer.loglikelihood(requests)
    # the clock reads 2 s later at each of the two-request batches: a commit when 5 s have passed, every third batch
    assert set(store.saves) == {6} and sum(store.saves) == len(requests)


def test_results_are_committed_by_share_when_the_clock_stands_still(tmp_path):
    """A fast model scores a whole chunk in less than commit_seconds: 2 % of the results wait at most."""
    from culturebias.domain.runs import RunManifest

    store = CountingStore(tmp_path / "results.sqlite")
    store.create_run(RunManifest(run_id="r", benchmark="toy", config={}, config_fingerprint="c", data_fingerprint="d"))
    scorer = RecordedScorer(BatchingScorer(), store, "r", NullProgress(), chunk_size=1000, commit_seconds=5, clock=lambda: 0.0)
    requests = [LoglikelihoodRequest("", f"{w}{n}") for n in range(50) for w in WORDS]
    scorer.loglikelihood(requests)
    assert set(store.saves) == {12} and sum(store.saves) == len(requests)


def test_an_interruption_commits_the_results_still_waiting(tmp_path):
    from culturebias.domain.runs import RunManifest

    store = CountingStore(tmp_path / "results.sqlite")
    store.create_run(RunManifest(run_id="r", benchmark="toy", config={}, config_fingerprint="c", data_fingerprint="d"))
    scorer = RecordedScorer(
        BatchingScorer(stop_after=7), store, "r", NullProgress(), chunk_size=1000, commit_seconds=5, clock=lambda: 0.0
    )
    with pytest.raises(KeyboardInterrupt):
        scorer.loglikelihood([LoglikelihoodRequest("", f"{w}{n}") for n in range(50) for w in WORDS])
    assert store.saves == [12, 2], "12 by share (2 % of 600), then the 2 waiting when the interruption came"


def test_results_are_committed_after_every_batch_with_commit_seconds_zero(tmp_path):
    from culturebias.domain.runs import RunManifest

    store = CountingStore(tmp_path / "results.sqlite")
    store.create_run(RunManifest(run_id="r", benchmark="toy", config={}, config_fingerprint="c", data_fingerprint="d"))
    scorer = RecordedScorer(BatchingScorer(), store, "r", NullProgress(), chunk_size=5, commit_seconds=0)
    scorer.loglikelihood([LoglikelihoodRequest("", w) for w in WORDS])
    assert sum(store.saves) == len(WORDS) and max(store.saves) <= 2


def test_the_resume_refusal_names_the_settings_that_differ(tmp_path):
    base = {"model": {"batch_size": 4, "path": "/m"}, "run": {"seed": 0, "chunk_size": 2048}, "model_weights": {"w.safetensors": "10:aa"}}
    changed = {"model": {"batch_size": 8, "path": "/m"}, "run": {"seed": 0, "chunk_size": 64}, "model_weights": {"w.safetensors": "10:bb"}}

    def request(identity, resume):
        r = make_request(tmp_path, ROWS, resume=resume, config=identity)
        r.identity = identity
        return r

    first = request(base, False)
    with pytest.raises(KeyboardInterrupt):
        run_benchmark(first, context_factory(Exploding(ScriptedScorer(rule), batches=1), [first.store]))
    second = request(changed, True)
    with pytest.raises(ResumeMismatchError) as refused:
        run_benchmark(second, context_factory(ScriptedScorer(rule), [second.store]))
    message = str(refused.value)
    assert "model.batch_size: 4 -> 8" in message
    assert "run.chunk_size: 2048 -> 64" in message
    assert "model_weights.w.safetensors: '10:aa' -> '10:bb'" in message
    assert "model.path" not in message, "only what differs is named"


def test_a_resumed_run_never_mixes_scores_of_other_numeric_settings(tmp_path):
    from culturebias.domain.identity import ScoreProvenance

    class OtherBatching(ScriptedScorer):
        @property
        def provenance(self):
            return ScoreProvenance(backend="scripted", dtype="float64", batch_size=32, padding_side="none")

    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, ROWS, Exploding(ScriptedScorer(rule), batches=1))
    with pytest.raises(ResumeMismatchError, match=r"batch_size: 0 -> 32\)"):
        run(tmp_path, ROWS, OtherBatching(rule), resume=True)


class ShownProgress:
    """What a progress bar would show: the sum of its advances."""

    def __init__(self) -> None:
        self.shown = 0
        self.total: int | None = None

    def task(self, description, total):
        self.total = total
        return self

    def advance(self, n: int = 1) -> None:
        self.shown += n

    def close(self) -> None:
        pass


class WatchedScorer:
    """Scores in batches like hf (delivering each to the sink); after every batch, and before, it notes what a kill
    at that moment would keep (the results stored) against what the bar shows and what was computed."""

    def __init__(self, store, bar: ShownProgress, batch: int):
        self.inner = ScriptedScorer(rule)
        self.store, self.bar, self.batch = store, bar, batch
        self.computed = 0
        self.seen: list[tuple[int, int, int]] = []  # (shown, kept, computed)

    identity = property(lambda self: self.inner.identity)
    provenance = property(lambda self: self.inner.provenance)

    def check_loglikelihood(self) -> None:
        pass

    def watch(self) -> None:
        self.seen.append((self.bar.shown, self.store.kept, self.computed))

    def loglikelihood(self, requests, progress=None):
        results = []
        for start in range(0, len(requests), self.batch):
            self.watch()
            batch = self.inner.loglikelihood(requests[start : start + self.batch])
            results += batch
            self.computed += len(batch)
            progress.advance(len(batch))
            progress.deliver({start + i: r for i, r in enumerate(batch)})
            self.watch()
        return results


@pytest.mark.parametrize("seconds_per_batch", [0.0, 3.0], ids=["fast-model", "slow-model"])
@pytest.mark.parametrize("total", [7692, 300])
def test_a_kill_at_any_moment_keeps_the_share_the_bar_shows(tmp_path, seconds_per_batch, total):
    """TWBias's 7,692 log-likelihoods (and a short run) in chunks of 2,048, batches of 64: at every moment a kill
    could strike, the stored share is at least the shown share less 5 points, and what was computed but not
    stored stays within 2 % of the results (plus the batch being delivered)."""
    from culturebias.adapters.stores.memory_store import MemoryResultStore
    from culturebias.domain.runs import RunManifest

    class KeptCounting(MemoryResultStore):
        kept = 0

        def save_results(self, run_id, stage, results, progress=None):
            super().save_results(run_id, stage, results, progress)
            if stage == "loglikelihood":
                self.kept += len(results)  # each key is saved once: the results a kill now keeps

    store = KeptCounting()
    store.create_run(RunManifest(run_id="r", benchmark="toy", config={}, config_fingerprint="c", data_fingerprint="d"))
    bar = ShownProgress()
    watched = WatchedScorer(store, bar, batch=64)
    clock = iter(n * seconds_per_batch for n in range(10**6))  # one reading per delivered batch, and one per chunk
    scorer = RecordedScorer(watched, store, "r", bar, chunk_size=2048, commit_seconds=2.0, clock=lambda: next(clock))
    scorer.loglikelihood([LoglikelihoodRequest("", f"sentence {n}") for n in range(total)])
    assert bar.total == total and bar.shown == total
    for shown, kept, computed in watched.seen:
        assert kept / total >= shown / total - 0.05, (shown, kept)
        assert computed - kept <= max(1, int(0.02 * total)) + 64, (computed, kept)
