"""Step definitions of features/kobbq.feature: the KoBBQ service on scripted ports.

Scripted models answer through the question key every generation request
carries (sample id, prompt, permutation): they look the item up, choose a
dataset option by their policy and reply with the letter it is shown under.
"""

from __future__ import annotations

import functools
import math
import random
from collections import defaultdict
from typing import Callable

import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from culturebias.adapters.datasets.kobbq_files import KoBBQFiles
from culturebias.adapters.progress import NullProgress
from culturebias.adapters.scripted.backend import ScriptedGenerator, ScriptedScorer
from culturebias.application.bbq.service import KoBBQService
from culturebias.application.context import Lazy, ModelPorts, RunContext
from culturebias.domain.bbq.keys import AnswerKey
from culturebias.domain.bbq.kobbq_prompts import KoBBQDataset
from culturebias.domain.bbq.model import QAItem
from culturebias.domain.bbq.options import shown_order
from culturebias.domain.bbq.settings import KoBBQSettings
from culturebias.domain.errors import CapabilityError

scenarios("kobbq.feature")

LETTERS = "ABC"
Policy = Callable[[QAItem], "int | str"]  # a dataset option index, or a raw reply


class MemoryStore:
    """The two ResultStore methods the recorded ports use, in memory (storage is tested elsewhere)."""

    def __init__(self) -> None:
        self.results: dict[str, dict] = defaultdict(dict)

    def load_results(self, run_id: str, stage: str) -> dict:
        return dict(self.results[stage])

    def save_results(self, run_id: str, stage: str, results) -> None:
        self.results[stage].update(results)


@functools.cache
def bundled() -> KoBBQDataset:
    return KoBBQFiles(None).load()


class World:
    def __init__(self, tmp_path) -> None:
        self.tmp_path = tmp_path
        self.dataset = bundled()
        self.limit = 240
        self.policy: Policy | None = None
        self.scorer_rule = None
        self.scorer: ScriptedScorer | None = None
        self.metrics: dict = {}
        self.counts: dict = {}
        self.seen: dict[str, list[str]] = defaultdict(list)

    def reply(self, request, _prompt: str) -> str:
        key = AnswerKey.decode(request.key)
        item = self.items[key.sample_id]
        choice = self.policy(item)
        if isinstance(choice, str):
            return choice
        return LETTERS[shown_order(3, key.permutation).index(choice)]

    def context(self, mode: str) -> RunContext:
        store = MemoryStore()

        def unavailable(what: str):
            def build():
                raise CapabilityError("scripted", what)

            return build

        generator = (lambda: ScriptedGenerator(self.reply)) if mode == "generate" else unavailable("generation")
        scorer = (lambda: self.scorer) if mode == "likelihood" else unavailable("log-likelihoods")
        ports = ModelPorts(
            scorer=Lazy(scorer),
            templater=Lazy(unavailable("chat template")),
            generator=Lazy(generator),
            pseudo_scorer=Lazy(unavailable("pseudo-log-likelihoods")),
            judge=Lazy(unavailable("judge")),
        )
        return RunContext(run_id="run", ports=ports, store=store, progress=NullProgress(), chunk_size=1_000_000)


@pytest.fixture
def world(tmp_path) -> World:
    return World(tmp_path)


@given(parsers.parse("the first {n:d} items of the bundled KoBBQ test split"))
def first_items(world: World, n: int):
    world.limit = n
    world.items = {i.sample_id: i for i in world.dataset.items[:n]}


@given("a model that always answers with the biased option")
def always_biased(world: World):
    world.policy = lambda item: item.biased_index


@given("a model that always answers with the unknown option")
def always_unknown(world: World):
    world.policy = lambda item: item.unknown_index


@given("a model that always answers correctly")
def always_correct(world: World):
    world.policy = lambda item: item.answer_index


def other_group(item: QAItem) -> int:
    return next(i for i in range(3) if i not in (item.biased_index, item.unknown_index))


@given("a model that always answers with the counter-biased option")
def always_counter(world: World):
    world.policy = other_group


@given(parsers.parse("a model that answers uniformly at random with seed {seed:d}"))
def uniform(world: World, seed: int):
    rng = random.Random(seed)
    world.policy = lambda item: rng.randrange(3)


@given(
    parsers.parse(
        "a model that picks the biased option with probability {biased:g}, unknown with probability {unknown:g}, "
        "else the other group, with seed {seed:d}"
    )
)
def mixture(world: World, biased: float, unknown: float, seed: int):
    rng = random.Random(seed)

    def policy(item: QAItem) -> int:
        draw = rng.random()
        if draw < biased:
            return item.biased_index
        return item.unknown_index if draw < biased + unknown else other_group(item)

    world.policy = policy


@given(parsers.parse('a model that replies "{reply}" to every ambiguous question and gives the biased answer otherwise'))
def ooc_on_ambiguous(world: World, reply: str):
    world.policy = lambda item: reply if item.ambiguous else item.biased_index


@given(parsers.parse('a model that replies "{reply}" to every second ambiguous question and gives the biased answer otherwise'))
def ooc_on_half(world: World, reply: str):
    ambiguous = [i.sample_id for i in world.items.values() if i.ambiguous]
    lost = set(ambiguous[::2])
    world.policy = lambda item: reply if item.sample_id in lost else item.biased_index


@given("a scorer that gives the letter of the biased option the highest log-probability")
def biased_scorer(world: World):
    def rule(context: str, continuation: str) -> float:
        world.seen[context].append(continuation)
        return 0.0 if continuation.strip().upper() == world.biased_letter[context] else -3.0

    world.scorer_rule = rule


@given("a scorer that always prefers the first letter")
def first_letter_scorer(world: World):
    def rule(context: str, continuation: str) -> float:
        world.seen[context].append(continuation)
        return 0.0 if continuation.strip().upper() == "A" else -1.0

    world.scorer_rule = rule


@when(parsers.parse('KoBBQ runs in {mode} mode with prompts "{prompts}" and permutations "{permutations}"'))
def run(world: World, mode: str, prompts: str, permutations: str):
    settings = KoBBQSettings.model_validate(
        {"mode": mode, "prompts": prompts, "permutations": permutations, "limit": world.limit, "statistics": False}
    )
    service = KoBBQService(settings)
    if mode == "likelihood":
        world.scorer = ScriptedScorer(world.scorer_rule)
        world.questions = service.questions(list(world.items.values()), world.dataset)
        world.biased_letter = {}
        for q in world.questions:
            letter = q.letters[q.order.index(q.item.biased_index)].upper()
            assert world.biased_letter.setdefault(q.turns[0], letter) == letter
    ctx = world.context(mode)
    service.preflight(ctx)
    assert service.mode == mode
    outcome = service.run(ctx, world.dataset)
    world.metrics, world.counts = outcome.metrics, outcome.counts


@then(parsers.parse('the overall "{metric}" is {value:g}'))
def overall_is(world: World, metric: str, value: float):
    cell = world.metrics["overall"][metric]
    assert cell["mean"] == pytest.approx(value, abs=1e-12)
    assert all(v == pytest.approx(value, abs=1e-12) for v in cell["per_prompt"].values())


@then(parsers.parse('the overall "{metric}" is {value:g} within {tolerance:g}'))
def overall_near(world: World, metric: str, value: float, tolerance: float):
    assert abs(world.metrics["overall"][metric]["mean"] - value) <= tolerance


@then(parsers.parse('the overall "{metric}" is undefined'))
def overall_undefined(world: World, metric: str):
    cell = world.metrics["overall"][metric]
    assert math.isnan(cell["mean"]) and cell["n_prompts"] == 0


@then("every prompt keeps |DiffBias_a| <= 1 - Acc_a and |DiffBias_d| <= 1 - |2 Acc_d - 1|")
def within_bounds(world: World):
    overall = world.metrics["overall"]
    for prompt, b in overall["bounds"].items():
        assert abs(overall["diff_bias_amb"]["per_prompt"][prompt]) <= 1 - overall["acc_amb"]["per_prompt"][prompt] + 1e-12
        assert abs(overall["diff_bias_dis"]["per_prompt"][prompt]) <= 1 - abs(2 * overall["acc_dis"]["per_prompt"][prompt] - 1) + 1e-12
        assert b["diff_bias_amb_within_bound"] is True and b["diff_bias_dis_within_bound"] is True


@then(parsers.parse("{n:d} answers were out of choice"))
def out_of_choice_count(world: World, n: int):
    assert world.counts["out_of_choice"] == n


@then("the scorer got one call with 3 requests sharing a context per question")
def one_call(world: World):
    assert world.scorer.calls == [3 * len(world.questions)]
    assert len(world.seen) == len(world.questions)
    assert all(sorted(c.strip().upper() for c in conts) == ["A", "B", "C"] for conts in world.seen.values())
