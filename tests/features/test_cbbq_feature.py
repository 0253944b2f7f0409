"""Step definitions of features/cbbq.feature: the CBBQ service on scripted ports.

The world and the steps CBBQ shares with KoBBQ are in ``culturebias.testing.bbq_steps``.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from culturebias.adapters.datasets.cbbq_files import CBBQFiles
from culturebias.application.bbq.service import CBBQService
from culturebias.domain.bbq.keys import AnswerKey
from culturebias.domain.bbq.model import BBQDataset, QAItem
from culturebias.domain.bbq.options import CBBQOptions
from culturebias.testing.bbq_steps import *  # noqa: F403  (the shared steps, as fixtures of this module)
from culturebias.testing.bbq_steps import BBQWorld, other_group

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
    fallback = (lambda item: item.biased_index) if kind == "biased" else other_group
    world.policy = lambda item: item.unknown_index if second(item) else fallback(item)


@given("a model that gives the biased answer to every second ambiguous question and answers correctly otherwise")
def biased_then_correct(world: CBBQWorld):
    second = alternating("ambiguous")
    world.policy = lambda item: item.biased_index if second(item) else item.answer_index


@given(parsers.parse('a model that replies "{reply}" to every second ambiguous question and gives the biased answer otherwise'))
def ooc_then_biased(world: CBBQWorld, reply: str):
    second = alternating("ambiguous")
    world.policy = lambda item: reply if second(item) else item.biased_index


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


@then(parsers.parse("{n:d} items were unresolved and not asked"))
def unresolved(world: CBBQWorld, n: int):
    assert world.counts.biased_answer_unresolved == n
    asked = {line.split("|", 1)[0] for line in world.predictions}
    assert len(asked) == world.counts.items - n
    assert world.counts.answers == world.counts.items - n
