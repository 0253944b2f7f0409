"""Step definitions of features/kobbq.feature: the KoBBQ service on scripted ports.

The world and the steps KoBBQ shares with CBBQ are in ``culturebias.testing.bbq_steps``.
"""

from __future__ import annotations

import functools
import random
from collections import defaultdict

import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from culturebias.adapters.datasets.kobbq_files import KoBBQFiles
from culturebias.application.bbq.service import KoBBQService
from culturebias.domain.bbq.kobbq_prompts import KoBBQDataset
from culturebias.domain.bbq.model import QAItem
from culturebias.domain.bbq.options import KoBBQOptions
from culturebias.testing.bbq_steps import *  # noqa: F403  (the shared steps, as fixtures of this module)
from culturebias.testing.bbq_steps import BBQWorld, other_group

scenarios("kobbq.feature")


@functools.cache
def bundled() -> KoBBQDataset:
    return KoBBQFiles(None).load()


class KoBBQWorld(BBQWorld):
    def __init__(self) -> None:
        super().__init__(bundled())
        self.limit = 240
        self.items: dict[str, QAItem] = {}
        self.seen: dict[str, list[str]] = defaultdict(list)
        self.biased_letter: dict[str, str] = {}
        self.questions: list = []


@pytest.fixture
def world() -> KoBBQWorld:
    return KoBBQWorld()


@given(parsers.parse("the first {n:d} items of the bundled KoBBQ test split"))
def first_items(world: KoBBQWorld, n: int):
    world.limit = n
    world.items = {i.sample_id: i for i in world.dataset.items[:n]}


@given(parsers.parse("a model that answers uniformly at random with seed {seed:d}"))
def uniform(world: KoBBQWorld, seed: int):
    rng = random.Random(seed)
    world.policy = lambda item: rng.randrange(3)


@given(
    parsers.parse(
        "a model that picks the biased option with probability {biased:g}, unknown with probability {unknown:g}, "
        "else the other group, with seed {seed:d}"
    )
)
def mixture(world: KoBBQWorld, biased: float, unknown: float, seed: int):
    rng = random.Random(seed)

    def policy(item: QAItem) -> int:
        draw = rng.random()
        if draw < biased:
            assert item.biased_index is not None
            return item.biased_index
        return item.unknown_index if draw < biased + unknown else other_group(item)

    world.policy = policy


@given(parsers.parse('a model that replies "{reply}" to every ambiguous question and gives the biased answer otherwise'))
def ooc_on_ambiguous(world: KoBBQWorld, reply: str):
    world.policy = lambda item: reply if item.ambiguous else item.biased_index


@given(parsers.parse('a model that replies "{reply}" to every second ambiguous question and gives the biased answer otherwise'))
def ooc_on_half(world: KoBBQWorld, reply: str):
    ambiguous = [i.sample_id for i in world.items.values() if i.ambiguous]
    lost = set(ambiguous[::2])
    world.policy = lambda item: reply if item.sample_id in lost else item.biased_index


@given("a scorer that gives the letter of the biased option the highest log-probability")
def biased_scorer(world: KoBBQWorld):
    def rule(context: str, continuation: str) -> float:
        world.seen[context].append(continuation)
        return 0.0 if continuation.strip().upper() == world.biased_letter[context] else -3.0

    world.scorer_rule = rule


@given("a scorer that always prefers the first letter")
def first_letter_scorer(world: KoBBQWorld):
    def rule(context: str, continuation: str) -> float:
        world.seen[context].append(continuation)
        return 0.0 if continuation.strip().upper() == "A" else -1.0

    world.scorer_rule = rule


@when(parsers.parse('KoBBQ runs in {mode} mode with prompts "{prompts}" and permutations "{permutations}"'))
def run(world: KoBBQWorld, mode: str, prompts: str, permutations: str):
    options = KoBBQOptions.model_validate(
        {"mode": mode, "prompts": prompts, "permutations": permutations, "limit": world.limit, "statistics": False}
    )
    service = KoBBQService(options)
    if mode == "likelihood":
        world.questions = service.questions(list(world.items.values()), world.dataset)
        for q in world.questions:
            letter = q.letters[q.order.index(q.item.biased_index)].upper()
            assert world.biased_letter.setdefault(q.turns[0], letter) == letter
    world.run(service, mode)


@then(parsers.parse('the overall "{metric}" is {value:g}'))
def overall_is(world: KoBBQWorld, metric: str, value: float):
    cell = getattr(world.metrics.overall, metric)
    assert cell.mean == pytest.approx(value, abs=1e-12)
    assert all(v == pytest.approx(value, abs=1e-12) for v in cell.per_prompt.values())


@then(parsers.parse('the overall "{metric}" is {value:g} within {tolerance:g}'))
def overall_near(world: KoBBQWorld, metric: str, value: float, tolerance: float):
    assert abs(getattr(world.metrics.overall, metric).mean - value) <= tolerance


@then(parsers.parse('the overall "{metric}" is undefined'))
def overall_undefined(world: KoBBQWorld, metric: str):
    cell = getattr(world.metrics.overall, metric)
    assert cell.mean is None and cell.n_prompts == 0  # undefined (NaN) is null in the typed summary


@then("every prompt keeps |DiffBias_a| <= 1 - Acc_a and |DiffBias_d| <= 1 - |2 Acc_d - 1|")
def within_bounds(world: KoBBQWorld):
    overall = world.metrics.overall
    for prompt, b in overall.bounds.items():
        assert abs(overall.diff_bias_amb.per_prompt[prompt]) <= 1 - overall.acc_amb.per_prompt[prompt] + 1e-12
        assert abs(overall.diff_bias_dis.per_prompt[prompt]) <= 1 - abs(2 * overall.acc_dis.per_prompt[prompt] - 1) + 1e-12
        assert b.diff_bias_amb_within_bound is True and b.diff_bias_dis_within_bound is True


@then("the scorer got one call with 3 requests sharing a context per question")
def one_call(world: KoBBQWorld):
    assert world.scorer is not None
    assert world.scorer.calls == [3 * len(world.questions)]
    assert len(world.seen) == len(world.questions)
    assert all(sorted(c.strip().upper() for c in conts) == ["A", "B", "C"] for conts in world.seen.values())
