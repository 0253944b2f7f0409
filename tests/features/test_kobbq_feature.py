"""Step definitions of features/kobbq.feature: the KoBBQ service on scripted ports.

The world and the steps KoBBQ shares with CBBQ are in ``culturebias.testing.bbq_steps``.
"""

from __future__ import annotations

import functools
import random
from collections import Counter, defaultdict

import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from dataclasses import replace

from culturebias.adapters.kobbq.files import BUNDLED, REFERENCE_PREFIX, KoBBQFiles, read_templates
from culturebias.domain.kobbq.sampling import numbers_of, pair_key, sample_per_template
from culturebias.domain.kobbq.templates import expand_templates
from culturebias.application.kobbq.service import KoBBQService
from culturebias.domain.kobbq.prompts import KoBBQDataset
from culturebias.domain.bbq.model import QAItem
from culturebias.domain.kobbq.options import KoBBQOptions
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


@given("the bundled KoBBQ templates expanded", target_fixture="expanded")
def expanded_templates() -> list[dict]:
    return list(expand_templates(read_templates(BUNDLED / "KoBBQ_templates.tsv")))


@when(parsers.parse("one combination per template and version pair is drawn with seed {seed:d}"), target_fixture="drawn")
def drawn(expanded: list[dict], seed: int) -> list:
    return sample_per_template(expanded, seed)


def _shape(sample_ids) -> Counter:
    return Counter((pair_key(s)[0], s.split("-")[1][-1], *s.split("-")[3:]) for s in sample_ids)


@then(parsers.parse("the draw has {n:d} samples: every template, version, context and question of the released test split once"))
def drawn_shape(drawn: list, n: int):
    released = [i.sample_id for i in bundled().items]
    assert len(drawn) == n == len(released)
    assert _shape(r["sample_id"] for r in drawn) == _shape(released)
    assert set(_shape(released).values()) == {1}


@then("pinned to the numbers of the released test split the sampler returns exactly its samples")
def pinned(expanded: list[dict]):
    released = {i.sample_id: i for i in bundled().items}
    reproduced = sample_per_template(expanded, numbers=numbers_of(released))
    assert {r["sample_id"] for r in reproduced} == set(released)
    assert all(r["context"] == released[r["sample_id"]].context for r in reproduced)


@given("all items of the bundled KoBBQ test split")
def all_items(world: KoBBQWorld):
    world.limit = None
    world.items = {i.sample_id: i for i in world.dataset.items}


@given(
    parsers.parse(
        'a model that gives the biased answer to the ambiguous questions of "{category}" and answers "unknown" '
        "to every other ambiguous question"
    )
)
def biased_in_one_category(world: KoBBQWorld, category: str):
    world.policy = lambda item: (
        item.answer_index if not item.ambiguous else item.biased_index if item.category == category else item.unknown_index
    )


@given("all items of the bundled KoBBQ test split, with the same items as a reference data set")
def with_reference(world: KoBBQWorld):
    reference = tuple(replace(i, sample_id=REFERENCE_PREFIX + i.sample_id) for i in bundled().items)
    world.dataset = replace(bundled(), reference=reference)
    world.by_id.update({i.sample_id: i for i in reference})
    all_items(world)


@given(
    'a model that answers "unknown" to every ambiguous KoBBQ question and gives the biased answer '
    "to every ambiguous reference question"
)
def biased_on_reference(world: KoBBQWorld):
    def policy(item: QAItem) -> int:
        if not item.ambiguous:
            return item.answer_index
        return item.biased_index if item.sample_id.startswith(REFERENCE_PREFIX) else item.unknown_index

    world.policy = policy


def _rank_sums(world: KoBBQWorld):
    rows = world.metrics.tests.rank_sum_reference
    assert rows is not None and world.metrics.tests.reference == "the reference"
    return rows


@then(parsers.parse('the rank-sum test of "{metric}" against the reference is marked "{mark}" for label types "all", "ST" and "TM"'))
def reference_marked(world: KoBBQWorld, metric: str, mark: str):
    rows = {r.label_type: r for r in _rank_sums(world) if r.metric == metric}
    assert set(rows) == {"all", "ST", "TM"}
    for row in rows.values():
        assert row.p_value < 0.01 and row.mark == mark and row.statistic < 0  # this data ranks lower
        assert row.n_a == row.n_b > 0


@then("the KoBBQ scores count no reference answer")
def no_reference_in_scores(world: KoBBQWorld):
    assert world.metrics.overall.diff_bias_amb.mean == 0
    assert world.counts.answers == len(bundled().items)
    assert not any(line.startswith(REFERENCE_PREFIX) for line in world.predictions)


@then("no rank-sum test against the reference is significant at .1")
def reference_not_significant(world: KoBBQWorld):
    rows = _rank_sums(world)
    assert rows and all(r.mark == "" and (r.p_value is None or r.p_value >= 0.1) for r in rows)


@when(parsers.parse('KoBBQ runs with its statistics in {mode} mode with prompts "{prompts}" and permutations "{permutations}"'))
def run_with_statistics(world: KoBBQWorld, mode: str, prompts: str, permutations: str):
    run(world, mode, prompts, permutations, statistics=True)


def _test(world: KoBBQWorld, metric: str, across: str):
    tests = world.metrics.tests
    assert tests is not None and tests.confidence == 0.99
    test = (tests.across_categories if across == "categories" else tests.across_label_types)[metric]
    assert test is not None and test.confidence == 0.99
    return test


@then(parsers.parse('the run\'s Tukey HSD at 99% on normalised "{metric}" across {across} puts all {n:d} {what} in one group'))
def one_group(world: KoBBQWorld, metric: str, across: str, n: int, what: str):
    test = _test(world, metric, across)
    assert len(test.anova.groups) == n
    assert test.homogeneous_groups == [test.anova.groups]
    assert not any(pair.significant for pair in test.pairs)


@then(parsers.parse('the run\'s Tukey HSD at 99% on normalised "{metric}" across categories has the groups "{alone}" and the {n:d} other categories'))
def apart(world: KoBBQWorld, metric: str, alone: str, n: int):
    test = _test(world, metric, "categories")
    others = [g for g in test.anova.groups if g != alone]
    assert len(others) == n
    assert sorted(map(sorted, test.homogeneous_groups)) == sorted([[alone], sorted(others)])
    assert all(pair.significant == (alone in (pair.a, pair.b)) for pair in test.pairs)


@then(parsers.parse('the ANOVA of normalised "{metric}" across categories has p < .01'))
def anova_significant(world: KoBBQWorld, metric: str):
    assert _test(world, metric, "categories").anova.p_value < 0.01


@then(parsers.parse('every template\'s normalised "{metric}" is 1'))
def normalised_one(world: KoBBQWorld, metric: str):
    test = _test(world, metric, "categories")
    assert all(mean == pytest.approx(1.0) for mean in test.means.values())
    assert sum(test.n.values()) == len(world.outcome.details.template_scores)


@when(parsers.parse('KoBBQ runs in {mode} mode with prompts "{prompts}" and permutations "{permutations}"'))
def run(world: KoBBQWorld, mode: str, prompts: str, permutations: str, statistics: bool = False):
    options = KoBBQOptions.model_validate(
        {"mode": mode, "prompts": prompts, "permutations": permutations, "limit": world.limit, "statistics": statistics}
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
