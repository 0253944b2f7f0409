"""A plan before the run (requests, tokens, distinct tokens, ETA, cost) and the budgets that refuse or stop a run."""

from __future__ import annotations

import pytest

from culturebias.application.run_plan import (
    BudgetedPort,
    BudgetExceeded,
    Collected,
    CollectingPort,
    PlaceholderPort,
    Planner,
    Prices,
    Spent,
    request_text,
)
from culturebias.domain.identity import ModelIdentity
from culturebias.bootstrap.settings import load_settings
from culturebias.domain.errors import ConfigError
from culturebias.domain.requests import GenerationParams, GenerationRequest, LoglikelihoodRequest
from culturebias.domain.run_plan import Budget, estimated_tokens, refuse_over_budget, trie_nodes, with_stored
from culturebias.testing.context import run_with_fakes
from culturebias.testing.scripted import ScriptedScorer


def chars(text: str) -> list[int]:
    return [ord(c) for c in text]


def test_the_trie_counts_each_distinct_prefix_once():
    assert trie_nodes([[1, 2, 3], [1, 2, 4], [1, 5], [1, 2, 3]]) == 5
    assert trie_nodes([]) == 0


def test_estimated_tokens_without_a_tokenizer_share_prefixes_too():
    korean = "지난주 이마트 앞에서"  # 3-byte characters: about one pseudo-token each
    assert 6 <= len(estimated_tokens(korean)) <= 10
    a, b = estimated_tokens("The same long instruction, then A"), estimated_tokens("The same long instruction, then B")
    assert a[:-1] == b[:-1] and a != b


def requests() -> Collected:
    collected = Collected()
    collected.loglikelihood = [LoglikelihoodRequest("context ", c) for c in ("aa", "ab", "b", "c", "d", "e")]
    collected.generation = [GenerationRequest(prompt="Q1", params=GenerationParams(max_new_tokens=5))] * 2
    return collected


class FakeModel:
    """A model on a fake clock: loading takes 100 s, its first call 50 s more, then 2 s per request."""

    def __init__(self):
        self.now = 0.0
        self.calls: list[tuple[str, int]] = []

    def clock(self) -> float:
        return self.now

    def prepare(self, stage):
        self.now += 100.0

        def compute(requests):
            self.now += (50.0 if not self.calls else 0.0) + 2.0 * len(requests)
            self.calls.append((stage, len(requests)))

        return compute


def test_a_plan_counts_requests_tokens_distinct_tokens_and_calibrates_on_a_few():
    model = FakeModel()
    planner = Planner(
        benchmark="x", model="m", tokenize=chars, text=request_text(None), prepare=model.prepare,
        prices=Prices(1.0, 2.0), clock=model.clock,
    )
    plan = planner.plan(requests())
    ll, gen = plan.stages
    assert (ll.requests, ll.input_tokens, ll.tokens) == (6, 6 * 8 + 8, 6 * 8 + 8)
    assert ll.distinct_tokens == 8 + 1 + 2 + 4  # "context " once, "a" then "a"/"b", and b c d e
    assert (gen.requests, gen.input_tokens, gen.output_tokens, gen.distinct_tokens) == (2, 4, 10, 2)
    assert plan.requests == 8 and plan.tokens == ll.tokens + gen.tokens and not plan.tokens_estimated
    # a warm-up request, then one batch of four from the middle (requests 1-4); the 2 generations are one batch
    assert model.calls == [("loglikelihood", 1), ("loglikelihood", 4), ("generation", 2)]
    assert plan.cost == pytest.approx((56 + 4) / 1000 * 1.0 + 10 / 1000 * 2.0)
    text = plan.text()
    assert "requests: 8" in text and "distinct tokens after prefix sharing: 17" in text and "cost:" in text


def test_the_eta_is_requests_times_the_timed_batch_per_request_without_load_or_warm_up():
    model = FakeModel()
    plan = Planner(
        benchmark="x", model="m", tokenize=chars, text=request_text(None), prepare=model.prepare, clock=model.clock,
    ).plan(requests())
    ll, gen = plan.stages
    assert (ll.calibration_requests, ll.calibration_seconds, ll.seconds_per_request) == (4, 8.0, 2.0)
    assert ll.eta_seconds == pytest.approx(6 * 2.0) and gen.eta_seconds == pytest.approx(2 * 2.0)  # no 100 s load, no 50 s
    assert plan.eta_seconds == pytest.approx(16.0) and ll.prefix_sharing is None
    assert "2 s per request over a batch of 4" in plan.text()


def test_a_backend_sharing_prefixes_across_batches_scales_the_eta_by_the_stage_sharing_over_the_batch():
    model = FakeModel()
    plan = Planner(
        benchmark="x", model="m", tokenize=chars, text=request_text(None), prepare=model.prepare, clock=model.clock,
        shared_stages=frozenset({"loglikelihood"}),
    ).plan(requests())
    ll = plan.stages[0]
    batch = [chars("context " + c) for c in ("ab", "b", "c", "d")]  # requests 1-4: 8 + 2 + 1 + 1 + 1 tokens
    stage_share, batch_share = 15 / 56, trie_nodes(batch) / sum(len(b) for b in batch)
    assert ll.prefix_sharing == pytest.approx(stage_share / batch_share)
    assert ll.eta_seconds == pytest.approx(6 * 2.0 * stage_share / batch_share)
    assert plan.stages[1].prefix_sharing is None  # generation is not shared here


def test_a_resumed_plan_says_what_is_stored_and_about_what_is_left():
    plan = Planner(benchmark="x", model="m", tokenize=chars, text=request_text(None), prepare=None).plan(requests())
    resumed = with_stored(plan, {"loglikelihood": 5, "items": 3})
    assert resumed.stored_requests == 5 and "(resumed: 5 stored, about 3 left)" in resumed.text()
    assert plan.stored_requests is None and "resumed" not in plan.text()


def test_a_placeholder_port_records_and_builds_no_model():
    collected = Collected()
    identity = ModelIdentity(backend="openai", model="served")
    port = PlaceholderPort(identity, collected, scores=True)
    assert port.identity == identity and port.provenance.device == "none" and port.check_loglikelihood() is None
    assert PlaceholderPort(identity, collected).provenance is None  # a generator's replies carry none
    assert getattr(port, "probe_findings", None) is None
    assert port.loglikelihood([LoglikelihoodRequest("a", "b")])[0].logprob == -1.0
    assert collected.loglikelihood == [LoglikelihoodRequest("a", "b")]


def test_without_a_tokenizer_the_tokens_are_an_estimate_marked_so():
    plan = Planner(benchmark="x", model="served", tokenize=None, text=request_text(None), prepare=None).plan(requests())
    assert plan.tokens_estimated and "(estimated: no tokenizer)" in plan.text()
    assert plan.eta_seconds is None and plan.cost is None and "ETA: not calibrated" in plan.text()


def test_a_budget_smaller_than_the_calibration_is_refused_naming_the_setting():
    planner = Planner(
        benchmark="x", model="m", tokenize=chars, text=request_text(None), prepare=lambda stage: lambda requests: None,
        budget=Budget(max_requests=3),
    )
    with pytest.raises(ConfigError, match=r"run.max_requests=3 is smaller than the plan's calibration \(5 requests\)"):
        planner.plan(requests())


def test_a_run_above_its_budget_is_refused_with_the_plan():
    plan = Planner(benchmark="x", model="m", tokenize=chars, text=request_text(None), prepare=None).plan(requests())
    with pytest.raises(ConfigError, match="run.max_tokens=10 < 70 tokens") as refused:
        refuse_over_budget(plan, Budget(max_tokens=10))
    assert "plan for x on m" in str(refused.value)
    refuse_over_budget(plan, Budget(max_requests=8, max_tokens=70))  # at the budget: runs
    with pytest.raises(ConfigError, match="run.max_cost is set but the model has no price"):
        refuse_over_budget(plan, Budget(max_cost=1.0))


@pytest.mark.parametrize("key", ["run.max_requests", "run.max_tokens", "run.max_cost"])
@pytest.mark.parametrize("value", ["0", "-5"])
def test_zero_or_negative_budgets_are_refused_naming_the_setting(key, value):
    with pytest.raises(ConfigError, match=key):
        load_settings(None, [f"{key}={value}"])


def test_a_collecting_port_records_and_answers_placeholders_and_is_the_real_port_otherwise():
    scorer = ScriptedScorer(lambda c, x: -1.0)
    collected = Collected()
    port = CollectingPort(scorer, collected)
    assert port.identity == scorer.identity
    results = port.loglikelihood([LoglikelihoodRequest("a", "b")])
    assert len(results) == 1 and collected.loglikelihood == [LoglikelihoodRequest("a", "b")]


def by_length(context: str, continuation: str) -> float:
    return -float(len(continuation))


def test_a_run_that_reaches_its_budget_stops_keeps_its_work_and_resumes_to_the_same_numbers():
    from culturebias.adapters.stores.memory_store import MemoryResultStore

    options = {"limit": 4, "prompts": "1", "permutations": "0,1", "statistics": "false", "mode": "likelihood"}
    full = run_with_fakes("kobbq", options=options, scorer=ScriptedScorer(by_length)).summary
    store = MemoryResultStore()
    spent = Spent(Budget(max_requests=10), lambda request: 1)
    with pytest.raises(BudgetExceeded, match=r"would exceed run.max_requests=10.*--resume"):
        _budgeted_run(options, store, spent)
    stopped = store.find_runs("kobbq")[0]
    assert stopped.status != "finished" and spent.requests == 10
    resumed = run_with_fakes("kobbq", options=options, store=store, resume=True, scorer=ScriptedScorer(by_length)).summary
    assert resumed.run_id == stopped.run_id and resumed.metrics == full.metrics


def _budgeted_run(options, store, spent):
    """The run with its scorer behind the budget, sent to the model in calls of five requests."""
    from culturebias.testing.context import fake_context

    def context(run_id, store_):
        ctx = fake_context(store=store_, run_id=run_id, scorer=BudgetedPort(ScriptedScorer(by_length), spent))
        ctx.chunk_size = 5
        return ctx

    return run_with_fakes("kobbq", options=options, store=store, context=context)


def test_a_calibration_the_model_fails_leaves_the_plan_without_an_eta_and_the_failure_to_the_run():
    def failing(requests):
        raise RuntimeError("no answer for this request")

    plan = Planner(
        benchmark="x", model="m", tokenize=chars, text=request_text(None), prepare=lambda stage: failing
    ).plan(requests())
    assert plan.eta_seconds is None and plan.requests == 8
    assert any("calibration failed (RuntimeError: no answer for this request)" in n for n in plan.notes)


class RecordedTasks:
    """A progress reporter that keeps each task's description, total and count."""

    def __init__(self):
        self.tasks: list[list] = []

    def task(self, description, total):
        record = [description, total, 0, False]
        self.tasks.append(record)

        class Task:
            def advance(self, n: int = 1) -> None:
                record[2] += n

            def close(self) -> None:
                record[3] = True

        return Task()


def test_a_plan_shows_its_work_counting_tokens_and_timing_the_model():
    model, shown = FakeModel(), RecordedTasks()
    Planner(
        benchmark="x", model="m", tokenize=chars, text=request_text(None), prepare=model.prepare, clock=model.clock,
        progress=shown,
    ).plan(requests())
    assert shown.tasks == [
        ["plan: counting loglikelihood tokens", 6, 6, True],
        ["plan: timing loglikelihood on the model", 5, 5, True],  # a warm-up request and a batch of four
        ["plan: counting generation tokens", 2, 2, True],
        ["plan: timing generation on the model", 2, 2, True],
    ]
