"""Step definitions of features/cbbq.feature: the CBBQ service on scripted ports.

Scripted models answer through the question key of every generation request
(sample id, condition, permutation): they look the item up, choose a dataset
option by their policy and reply with the letter it is shown under.
"""

from __future__ import annotations

import functools
import math
from collections import Counter, defaultdict
from typing import Callable

import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from culturebias.adapters.datasets.cbbq_files import CBBQFiles
from culturebias.adapters.progress import NullProgress
from culturebias.adapters.scripted.backend import ScriptedGenerator, ScriptedScorer
from culturebias.application.bbq.service import CBBQService
from culturebias.application.context import Lazy, ModelPorts, RunContext
from culturebias.domain.bbq.keys import AnswerKey
from culturebias.domain.bbq.model import BBQDataset, QAItem
from culturebias.domain.bbq.options import shown_order
from culturebias.domain.bbq.settings import CBBQSettings
from culturebias.domain.errors import CapabilityError

scenarios("cbbq.feature")

LETTERS = "ABC"


@functools.cache
def bundled() -> BBQDataset:
    return CBBQFiles(None).load()


class MemoryStore:
    """The two ResultStore methods the recorded ports use, in memory."""

    def __init__(self) -> None:
        self.results: dict[str, dict] = defaultdict(dict)

    def load_results(self, run_id: str, stage: str) -> dict:
        return dict(self.results[stage])

    def save_results(self, run_id: str, stage: str, results) -> None:
        self.results[stage].update(results)


def other_group(item: QAItem) -> int:
    return next(i for i in range(3) if i not in (item.biased_index, item.unknown_index))


class World:
    def __init__(self) -> None:
        self.dataset = bundled()
        self.settings: dict = {}
        self.policy: Callable[[QAItem], "int | str"] | None = None
        self.reasoning: str | None = None
        self.scorer_rule = None
        self.requests: list = []
        self.metrics: dict = {}
        self.counts: dict = {}
        self.answers: list[str] = []

    @property
    def items(self) -> dict[str, QAItem]:
        return {i.sample_id: i for i in self.dataset.items}

    def reply(self, request, _prompt: str) -> str:
        self.requests.append(request)
        key = AnswerKey.decode(request.key)
        if key.turn == "reasoning":
            return self.reasoning or ""
        choice = self.policy(self.by_id[key.sample_id])
        if isinstance(choice, str):
            return choice
        return LETTERS[shown_order(3, key.permutation).index(choice)]

    def context(self, mode: str) -> RunContext:
        def unavailable(what: str):
            def build():
                raise CapabilityError("scripted", what)

            return build

        generator = (lambda: ScriptedGenerator(self.reply)) if mode == "generate" else unavailable("generation")
        scorer = (lambda: ScriptedScorer(self.scorer_rule)) if mode == "likelihood" else unavailable("log-likelihoods")
        ports = ModelPorts(
            scorer=Lazy(scorer),
            templater=Lazy(unavailable("chat template")),
            generator=Lazy(generator),
            pseudo_scorer=Lazy(unavailable("pseudo-log-likelihoods")),
            judge=Lazy(unavailable("judge")),
        )
        return RunContext(run_id="run", ports=ports, store=MemoryStore(), progress=NullProgress())


@pytest.fixture
def world() -> World:
    return World()


@given(parsers.parse("the first {n:d} ambiguous and {m:d} disambiguated items of each bundled CBBQ category"))
def first_items(world: World, n: int, m: int):
    assert n == m
    world.settings["limit"] = n


@given(parsers.parse('all items of the bundled CBBQ category "{category}"'))
def one_category(world: World, category: str):
    world.settings.pop("limit", None)
    world.settings["categories"] = category


@given("a model that always answers with the biased option")
def always_biased(world: World):
    world.policy = lambda item: item.biased_index


@given("a model that always answers with the unknown option")
def always_unknown(world: World):
    world.policy = lambda item: item.unknown_index


@given("a model that always answers correctly")
def always_correct(world: World):
    world.policy = lambda item: item.answer_index


def alternating(condition: str):
    """True for every second item of the given context condition, in file order."""
    flags: dict[str, bool] = {}
    for category in bundled().facts["categories"]:
        members = [i for i in bundled().items if i.category == category and i.context_condition == condition]
        for position, item in enumerate(members):
            flags[item.sample_id] = position % 2 == 0
    return lambda item: flags.get(item.sample_id, False)


@given(parsers.parse('a model that answers "unknown" to every second disambiguated question and gives the {kind} answer otherwise'))
def unknown_then(world: World, kind: str):
    second = alternating("disambiguated")
    fallback = (lambda item: item.biased_index) if kind == "biased" else other_group
    world.policy = lambda item: item.unknown_index if second(item) else fallback(item)


@given("a model that gives the biased answer to every second ambiguous question and answers correctly otherwise")
def biased_then_correct(world: World):
    second = alternating("ambiguous")
    world.policy = lambda item: item.biased_index if second(item) else item.answer_index


@given(parsers.parse('a model that replies "{reply}" to every second ambiguous question and gives the biased answer otherwise'))
def ooc_then_biased(world: World, reply: str):
    second = alternating("ambiguous")
    world.policy = lambda item: reply if second(item) else item.biased_index


@given(parsers.parse('a model that reasons "{reasoning}" and then always answers correctly'))
def reasoning_model(world: World, reasoning: str):
    world.reasoning = reasoning
    world.policy = lambda item: item.answer_index


@given("a scorer that gives the letter of the unknown option the highest log-probability")
def unknown_scorer(world: World):
    # Without a chat template the prompt lists the options as "A. …"; the unknown texts are known.
    unknown_texts = {i.options[i.unknown_index] for i in bundled().items}

    def rule(context: str, continuation: str) -> float:
        letter = continuation.strip()
        line = next(l for l in context.splitlines() if l.startswith(f"{letter}. "))
        return 0.0 if line[3:] in unknown_texts else -2.0

    world.scorer_rule = rule


@when(parsers.parse('CBBQ runs in {mode} mode under condition "{condition}"'))
def run(world: World, mode: str, condition: str):
    _run(world, mode, condition, {})


@when(parsers.parse('CBBQ runs in {mode} mode under condition "{condition}" with weights {w1:g} and {w2:g}'))
def run_weighted(world: World, mode: str, condition: str, w1: float, w2: float):
    _run(world, mode, condition, {"w1": w1, "w2": w2})


def _run(world: World, mode: str, condition: str, extra: dict):
    settings = CBBQSettings.model_validate({"mode": mode, "condition": condition, **world.settings, **extra})
    world.by_id = world.items
    service = CBBQService(settings)
    ctx = world.context(mode)
    service.preflight(ctx)
    assert service.mode == mode
    outcome = service.run(ctx, world.dataset)
    world.metrics, world.counts = outcome.metrics, outcome.counts
    world.answers = outcome.details["predictions"]


@then(parsers.parse('"{metric}" is {value:g}'))
def metric_is(world: World, metric: str, value: float):
    assert world.metrics["overall"][metric] == pytest.approx(value, abs=1e-12)


@then(parsers.parse('"{metric}" is undefined'))
def metric_undefined(world: World, metric: str):
    assert math.isnan(world.metrics["overall"][metric])


@then(parsers.parse('every category has "{a}" {va:g} and "{b}" {vb:g}'))
def every_category(world: World, a: str, va: float, b: str, vb: float):
    categories = world.metrics["by_category"]
    assert sorted(categories) == ["disease", "gender", "region", "sexual_orientation"]
    assert all(c[a] == pytest.approx(va) and c[b] == pytest.approx(vb) for c in categories.values())


@then(parsers.parse('{n:d} disambiguated answers were "unknown"'))
def unknown_count(world: World, n: int):
    assert world.metrics["overall"]["counts"]["n_dis_unknown"] == n


@then(parsers.parse("{n:d} answers were out of choice"))
def ooc_count(world: World, n: int):
    assert world.counts["out_of_choice"] == n
    assert Counter(line.rsplit("|", 1)[1] for line in world.answers)["out_of_choice"] == n


@then("every answer request carried the reasoning turn")
def reasoning_in_view(world: World):
    reasoning = [r for r in world.requests if AnswerKey.decode(r.key).turn == "reasoning"]
    answers = [r for r in world.requests if AnswerKey.decode(r.key).turn == "answer"]
    assert len(reasoning) == len(answers) == world.counts["answers"]
    assert all(world.reasoning in r.prompt for r in answers)
    assert not any(world.reasoning in r.prompt for r in reasoning)


@then(parsers.parse("{n:d} items were unresolved and not asked"))
def unresolved(world: World, n: int):
    assert world.counts["biased_answer_unresolved"] == n
    asked = {line.split("|", 1)[0] for line in world.answers}
    assert len(asked) == world.counts["items"] - n
    assert world.counts["answers"] == world.counts["items"] - n
