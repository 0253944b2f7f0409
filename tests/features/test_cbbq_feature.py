"""Step definitions of features/cbbq.feature: the CBBQ service on scripted ports.

The world and the steps CBBQ shares with KoBBQ are in ``culturebias.testing.bbq_steps``.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from culturebias.adapters.cbbq.files import CBBQFiles
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer, ScriptedTemplater
from culturebias.application.cbbq.service import CBBQService
from culturebias.domain.cbbq import prompts as cbbq_prompts
from culturebias.domain.bbq.keys import AnswerKey
from culturebias.domain.bbq.model import BBQDataset, QAItem
from culturebias.domain.cbbq.options import CBBQOptions
from culturebias.testing.bbq_steps import *  # noqa: F403  (the shared steps, as fixtures of this module)
from culturebias.testing.bbq_steps import BBQWorld, biased, other_group
from culturebias.testing.context import fake_context

scenarios("cbbq.feature")


@functools.cache
def bundled() -> BBQDataset:
    return CBBQFiles(None).load()


class CBBQWorld(BBQWorld):
    def __init__(self) -> None:
        super().__init__(bundled())
        self.options: dict[str, Any] = {}


@pytest.fixture
def world() -> CBBQWorld:
    return CBBQWorld()


@given(parsers.parse("the first {n:d} ambiguous and {m:d} disambiguated items of each bundled CBBQ category"))
def first_items(world: CBBQWorld, n: int, m: int):
    assert n == m
    world.options["limit"] = n


@given(parsers.parse('all items of the bundled CBBQ category "{category}"'))
def one_category(world: CBBQWorld, category: str):
    world.options.pop("limit", None)
    world.options["categories"] = category


def alternating(condition: str) -> Callable[[QAItem], bool]:
    """True for every second item of the given context condition, in file order."""
    flags: dict[str, bool] = {}
    for category in bundled().facts["categories"]:
        members = [i for i in bundled().items if i.category == category and i.context_condition == condition]
        for position, item in enumerate(members):
            flags[item.sample_id] = position % 2 == 0
    return lambda item: flags.get(item.sample_id, False)


@given(parsers.parse('a model that answers "unknown" to every second disambiguated question and gives the {kind} answer otherwise'))
def unknown_then(world: CBBQWorld, kind: str):
    second = alternating("disambiguated")
    fallback = biased if kind == "biased" else other_group
    world.policy = lambda item: item.unknown_index if second(item) else fallback(item)


@given("a model that gives the biased answer to every second ambiguous question and answers correctly otherwise")
def biased_then_correct(world: CBBQWorld):
    second = alternating("ambiguous")
    world.policy = lambda item: biased(item) if second(item) else item.answer_index


@given(parsers.parse('a model that replies "{reply}" to every second ambiguous question and gives the biased answer otherwise'))
def ooc_then_biased(world: CBBQWorld, reply: str):
    second = alternating("ambiguous")
    world.policy = lambda item: reply if second(item) else biased(item)


@given(parsers.parse('a model that reasons "{reasoning}" and then always answers correctly'))
def reasoning_model(world: CBBQWorld, reasoning: str):
    world.reasoning = reasoning
    world.policy = lambda item: item.answer_index


@given("a scorer that gives the letter of the unknown option the highest log-probability")
def unknown_scorer(world: CBBQWorld):
    # Without a chat template the prompt lists the options as "A. …"; the unknown texts are known.
    unknown_texts = {i.options[i.unknown_index] for i in bundled().items}

    def rule(context: str, continuation: str) -> float:
        letter = continuation.strip()
        line = next(l for l in context.splitlines() if l.startswith(f"{letter}. "))
        return 0.0 if line[3:] in unknown_texts else -2.0

    world.scorer_rule = rule


@when(parsers.parse('CBBQ runs in {mode} mode under condition "{condition}"'))
def run(world: CBBQWorld, mode: str, condition: str):
    _run(world, mode, condition, {})


@when(parsers.parse('CBBQ runs in {mode} mode under condition "{condition}" with weights {w1:g} and {w2:g}'))
def run_weighted(world: CBBQWorld, mode: str, condition: str, w1: float, w2: float):
    _run(world, mode, condition, {"w1": w1, "w2": w2})


def _run(world: CBBQWorld, mode: str, condition: str, extra: dict):
    options = CBBQOptions.model_validate({"mode": mode, "condition": condition, **world.options, **extra})
    world.run(CBBQService(options), mode)


@then(parsers.parse('"{metric}" is {value:g}'))
def metric_is(world: CBBQWorld, metric: str, value: float):
    assert getattr(world.metrics.overall, metric) == pytest.approx(value, abs=1e-12)


@then(parsers.parse('"{metric}" is undefined'))
def metric_undefined(world: CBBQWorld, metric: str):
    assert getattr(world.metrics.overall, metric) is None  # undefined (NaN) is null in the typed summary


@then(parsers.parse('every category has "{a}" {va:g} and "{b}" {vb:g}'))
def every_category(world: CBBQWorld, a: str, va: float, b: str, vb: float):
    categories = world.metrics.by_category
    assert sorted(categories) == ["disease", "gender", "region", "sexual_orientation"]
    assert all(getattr(c, a) == pytest.approx(va) and getattr(c, b) == pytest.approx(vb) for c in categories.values())


@then(parsers.parse('{n:d} disambiguated answers were "unknown"'))
def unknown_count(world: CBBQWorld, n: int):
    assert world.metrics.overall.counts.n_dis_unknown == n


@then("every answer request carried the reasoning turn")
def reasoning_in_view(world: CBBQWorld):
    reasoning = [r for r in world.requests if AnswerKey.decode(r.key).turn == "reasoning"]
    answers = [r for r in world.requests if AnswerKey.decode(r.key).turn == "answer"]
    assert len(reasoning) == len(answers) == world.counts.answers
    assert all(world.reasoning in r.prompt for r in answers)
    assert not any(world.reasoning in r.prompt for r in reasoning)


@when(parsers.parse('CBBQ runs in {mode} mode under condition "{condition}" with greedy reasoning'))
def run_greedy_reasoning(world: CBBQWorld, mode: str, condition: str):
    _run(world, mode, condition, {"reasoning_decoding": "greedy"})


def _turns(world: CBBQWorld, turn: str) -> list:
    return [r for r in world.requests if AnswerKey.decode(r.key).turn == turn]


@then("every reasoning turn was sampled and every answer turn was greedy")
def sampled_reasoning(world: CBBQWorld):
    assert _turns(world, "reasoning") and all(r.params.mode == "sample" for r in _turns(world, "reasoning"))
    assert all(r.params.mode == "greedy" for r in _turns(world, "answer"))
    assert world.metrics.reasoning.decoding == "sampled" and world.metrics.reasoning.seed == 0


@then("every reasoning turn asked the question with the IF and the CoT sentences")
def first_turn_sentences(world: CBBQWorld):
    for request in _turns(world, "reasoning"):
        assert cbbq_prompts.UNBIASED in request.prompt and cbbq_prompts.COT in request.prompt
        assert "问题：" in request.prompt


@then("every reasoning turn was greedy")
def greedy_reasoning(world: CBBQWorld):
    assert _turns(world, "reasoning") and all(r.params.mode == "greedy" for r in _turns(world, "reasoning"))


@then("the summary says the reasoning was greedy")
def summary_greedy(world: CBBQWorld):
    assert world.metrics.reasoning.decoding == "greedy" and world.metrics.reasoning.sampling == "greedy"
    assert world.metrics.reasoning.seed is None


@given(parsers.parse('a model that gives the biased answer where the targeted group is "{group}" and answers correctly otherwise'))
def biased_for_group(world: CBBQWorld, group: str):
    world.policy = lambda item: biased(item) if item.targeted_group == group else item.answer_index


def _cells(world: CBBQWorld):
    rows = world.metrics.by_condition[world.metrics.condition].by_group_topic
    assert rows
    return rows


@then(parsers.parse('every targeted group × topic cell of "{group}" has "{metric}" {value:g}'))
def group_cells(world: CBBQWorld, group: str, metric: str, value: float):
    cells = [r for r in _cells(world) if r.targeted_group == group]
    assert cells
    assert all(getattr(r.scores, metric) == pytest.approx(value) for r in cells)


@then(parsers.parse('every other targeted group × topic cell has "{metric}" {value:g}'))
def other_cells(world: CBBQWorld, metric: str, value: float):
    cells = [r for r in _cells(world) if r.targeted_group != "女性" and r.scores.counts.n_amb]
    assert cells and all(getattr(r.scores, metric) == pytest.approx(value) for r in cells)


@then("the cells' ambiguous answers add up to the overall ones")
def cells_add_up(world: CBBQWorld):
    overall = world.metrics.overall.counts
    assert sum(r.scores.counts.n_amb for r in _cells(world)) == overall.n_amb
    assert sum(r.scores.counts.n_amb_biased for r in _cells(world)) == overall.n_amb_biased


@then("the weights' source says the paper states only w2 > w1")
def weights_source(world: CBBQWorld):
    assert "w2 > w1" in world.metrics.weights.source and "0.4, 0.6" in world.metrics.weights.source


@given(parsers.parse("a masked LM whose pseudo-log-likelihood prefers the {kind} option"))
def masked_lm(world: CBBQWorld, kind: str):
    world.pll_requests = []

    def preferred(item: QAItem) -> int:
        return item.unknown_index if kind == "unknown" else biased(item)

    by_text = {}
    for item in bundled().items:
        for index, option in enumerate(item.options):
            by_text[(item.context, item.question, option)] = index == preferred(item)

    def rule(text: str, start: int, end: int) -> float:
        world.pll_requests.append((text, start, end))
        context, question, option = text.split("\n")
        assert option == text[start:end]
        return -0.1 * (end - start) if by_text[(context, question, option)] else -3.0 * (end - start)

    world.pseudo_rule = rule


@then("every option of every question was scored once, after the context and the question")
def options_scored(world: CBBQWorld):
    assert len(world.pll_requests) == 3 * world.counts.answers
    assert all(text.endswith(text[start:end]) and end == len(text) for text, start, end in world.pll_requests)


@when(parsers.parse('CBBQ runs in auto mode under condition "{condition}" on a chat model that can also score continuations'))
def run_auto_chat(world: CBBQWorld, condition: str):
    options = CBBQOptions.model_validate({"mode": "auto", "condition": condition, **world.options})
    service = CBBQService(options)
    ctx = fake_context(
        generator=ScriptedGenerator(world.reply), scorer=ScriptedScorer(lambda c, x: 0.0), templater=ScriptedTemplater()
    )
    plan = service.preflight(ctx)
    assert plan.chat is True
    world.outcome = service.run(ctx, world.dataset, plan)


@then("the summary says generate mode ran, requested as auto, as the papers did")
def generate_auto(world: CBBQWorld):
    answering = world.metrics.answering
    assert (world.metrics.mode, answering.requested, answering.matches_papers) == ("generate", "auto", True)
    assert "chat template" in answering.reason


@then("the summary says masked mode ran, requested as auto")
def masked_auto(world: CBBQWorld):
    answering = world.metrics.answering
    assert (world.metrics.mode, answering.mode, answering.requested) == ("masked", "masked", "auto")
    assert "masked LM" in answering.reason and answering.matches_papers is False


@then(parsers.parse("{n:d} items were unresolved and asked"))
def unresolved(world: CBBQWorld, n: int):
    assert world.counts.biased_answer_unresolved == n
    asked = {line.split("|", 1)[0] for line in world.predictions}
    assert len(asked) == world.counts.items == world.counts.answers
    assert world.metrics.overall.counts.n_amb_unresolved == n


@given("a model that answers \"unknown\" exactly where the biased answer is underivable and gives the biased answer otherwise")
def unknown_where_unresolved(world: CBBQWorld):
    world.policy = lambda item: item.unknown_index if item.biased_index is None else item.biased_index


@then(parsers.parse('"acc_amb" is {n:d} over the {m:d} ambiguous items of the run'))
def acc_amb_share(world: CBBQWorld, n: int, m: int):
    assert world.counts.ambiguous_items == m
    assert world.metrics.overall.acc_amb == pytest.approx(n / m, abs=1e-12)
