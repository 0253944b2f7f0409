"""A plan before the run (requests, tokens, distinct tokens, ETA, cost) and the budgets that refuse or stop a run."""

from __future__ import annotations

import pytest

from culturebias.application.run_plan import (
    BudgetedPort,
    BudgetExceeded,
    Collected,
    CollectingPort,
    Planner,
    Prices,
    Spent,
    request_text,
)
from culturebias.bootstrap.settings import load_settings
from culturebias.domain.errors import ConfigError
from culturebias.domain.requests import GenerationParams, GenerationRequest, LoglikelihoodRequest
from culturebias.domain.run_plan import Budget, estimated_tokens, refuse_over_budget, trie_nodes
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


def test_a_plan_counts_requests_tokens_distinct_tokens_and_calibrates_on_a_few():
    calls = []
    planner = Planner(
        benchmark="x", model="m", tokenize=chars, text=request_text(None),
        compute=lambda stage, reqs: calls.append((stage, len(reqs))), prices=Prices(1.0, 2.0),
    )
    plan = planner.plan(requests())
    ll, gen = plan.stages
    assert (ll.requests, ll.input_tokens, ll.tokens) == (6, 6 * 8 + 8, 6 * 8 + 8)
    assert ll.distinct_tokens == 8 + 1 + 2 + 4  # "context " once, "a" then "a"/"b", and b c d e
    assert (gen.requests, gen.input_tokens, gen.output_tokens, gen.distinct_tokens) == (2, 4, 10, 2)
    assert plan.requests == 8 and plan.tokens == ll.tokens + gen.tokens and not plan.tokens_estimated
    assert calls == [("loglikelihood", 4), ("generation", 2)]
    assert plan.eta_seconds is not None and plan.eta_seconds >= 0
    assert plan.cost == pytest.approx((56 + 4) / 1000 * 1.0 + 10 / 1000 * 2.0)
    text = plan.text()
    assert "requests: 8" in text and "distinct tokens after prefix sharing: 17" in text and "cost:" in text


def test_without_a_tokenizer_the_tokens_are_an_estimate_marked_so():
    plan = Planner(benchmark="x", model="served", tokenize=None, text=request_text(None), compute=None).plan(requests())
    assert plan.tokens_estimated and "(estimated: no tokenizer)" in plan.text()
    assert plan.eta_seconds is None and plan.cost is None and "ETA: not calibrated" in plan.text()


def test_a_budget_smaller_than_the_calibration_is_refused_naming_the_setting():
    planner = Planner(
        benchmark="x", model="m", tokenize=chars, text=request_text(None), compute=lambda *a: None,
        budget=Budget(max_requests=3),
    )
    with pytest.raises(ConfigError, match=r"run.max_requests=3 is smaller than the plan's calibration \(4 requests\)"):
        planner.plan(requests())


def test_a_run_above_its_budget_is_refused_with_the_plan():
    plan = Planner(benchmark="x", model="m", tokenize=chars, text=request_text(None), compute=None).plan(requests())
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
    def failing(stage, requests):
        raise RuntimeError("no answer for this request")

    plan = Planner(benchmark="x", model="m", tokenize=chars, text=request_text(None), compute=failing).plan(requests())
    assert plan.eta_seconds is None and plan.requests == 8
    assert any("calibration failed (RuntimeError: no answer for this request)" in n for n in plan.notes)
