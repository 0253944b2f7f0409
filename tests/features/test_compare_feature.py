"""Step definitions of features/compare.feature: runs of scripted models through the real orchestrator, then compared."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from culturebias.application.compare import build_comparison
from culturebias.bootstrap.registry import registry
from culturebias.domain.kobbq.comparison import KoBBQComparison, RankSumRow
from culturebias.domain.comparison.envelope import ComparisonMismatchError
from culturebias.domain.summary import RunSummary
from culturebias.testing.context import run_with_fakes
from culturebias.testing.kobbq_runs import bundled_kobbq, policy_generator

scenarios("compare.feature")


class World:
    def __init__(self) -> None:
        self.options: dict[str, Any] = {}
        self.runs: dict[str, RunSummary] = {}
        self.comparison: KoBBQComparison | None = None
        self.error: ComparisonMismatchError | None = None

    def add(self, name: str, policy: str, in_memory: bool = False) -> None:
        result = run_with_fakes(
            "kobbq",
            options=self.options,
            dataset=bundled_kobbq() if in_memory else None,
            generator=policy_generator(policy, name),
        )
        self.runs[name] = result.summary

    def compare(self, allow_data_mismatch: bool = False) -> None:
        self.comparison, self.error = None, None
        try:
            summaries = list(self.runs.values())
            comparer = registry().benchmark(summaries[0].benchmark).comparer()
            comparison = build_comparison(summaries, comparer, allow_data_mismatch=allow_data_mismatch)
        except ComparisonMismatchError as error:
            self.error = error
            return
        assert isinstance(comparison, KoBBQComparison)
        self.comparison = comparison

    def tests(self, a: str, b: str) -> list[RankSumRow]:
        assert self.comparison is not None
        return [r for r in self.comparison.body.wilcoxon if {r.a, r.b} == {a, b}]


@pytest.fixture
def world() -> World:
    return World()


@given(parsers.parse('the first {n:d} items of the bundled KoBBQ test split, asked under prompts "{prompts}"'))
def items(world: World, n: int, prompts: str):
    world.options = {"mode": "generate", "prompts": prompts, "permutations": "0", "limit": n, "statistics": False}


@given(parsers.parse('a run of a model "{name}" that always answers with the {policy} option'))
def a_run(world: World, name: str, policy: str):
    world.add(name, policy)


@given(parsers.parse('a run of a model "{name}" that always answers with the {policy} option, on the same items handed over in memory'))
def a_run_in_memory(world: World, name: str, policy: str):
    world.add(name, policy, in_memory=True)


@when("the runs are compared")
def compared(world: World):
    world.compare()


@when("the runs are compared with a data mismatch allowed")
def compared_anyway(world: World):
    world.compare(allow_data_mismatch=True)


@then(parsers.parse('no Wilcoxon rank-sum test between "{a}" and "{b}" is significant at .1'))
def none_significant(world: World, a: str, b: str):
    rows = world.tests(a, b)
    assert rows and all(r.p_value is not None and r.p_value >= 0.1 and r.mark == "" for r in rows)


@then(parsers.parse('every Wilcoxon p-value between "{a}" and "{b}" is 1'))
def p_is_one(world: World, a: str, b: str):
    assert all(r.p_value == pytest.approx(1.0) for r in world.tests(a, b))


@then(parsers.parse('Tukey\'s HSD finds no difference between "{a}" and "{b}" at 99%'))
def tukey_same(world: World, a: str, b: str):
    assert world.comparison is not None
    for test in world.comparison.body.tukey_across_models.values():
        assert test is not None and test.confidence == 0.99
        assert all(not pair.significant for pair in test.pairs if {pair.a, pair.b} == {a, b})


@then(parsers.parse('the Wilcoxon rank-sum test of "{metric}" between "{a}" and "{b}" has p < .01 and the mark "{mark}"'))
def significant(world: World, metric: str, a: str, b: str, mark: str):
    row = next(r for r in world.tests(a, b) if r.metric == metric and r.label_type == "all")
    assert row.p_value is not None and row.p_value < 0.01 and row.mark == mark


@then(parsers.parse('Tukey\'s HSD separates "{a}" and "{b}" on normalised "{metric}" at 99%'))
def tukey_separates(world: World, a: str, b: str, metric: str):
    assert world.comparison is not None
    test = world.comparison.body.tukey_across_models[metric]
    assert test is not None
    pair = next(p for p in test.pairs if {p.a, p.b} == {a, b})
    assert pair.significant and pair.p_value is not None and pair.p_value < 0.01


@then(parsers.parse('the normalised "{metric}" means are {first:g} for "{a}" and {second:g} for "{b}"'))
def normalised_means(world: World, metric: str, first: float, a: str, second: float, b: str):
    assert world.comparison is not None
    test = world.comparison.body.tukey_across_models[metric]
    assert test is not None
    assert test.means[a] == pytest.approx(first) and test.means[b] == pytest.approx(second)


@then(parsers.parse('the comparison is refused naming the run of "{name}", its data fingerprint and the other run\'s'))
def refused(world: World, name: str):
    assert world.comparison is None and world.error is not None
    run = world.runs[name]
    others = [s for n, s in world.runs.items() if n != name]
    message = str(world.error)
    assert world.error.field == "data fingerprint"
    assert run.run_id in message and run.data.fingerprint in message
    assert all(o.run_id in message and o.data.fingerprint in message for o in others)


@then("the comparison says that the data differ")
def says_so(world: World):
    assert world.comparison is not None and world.comparison.data_mismatch_allowed
    assert len(world.comparison.data_fingerprints) == 2
    assert any("data differ" in note for note in world.comparison.notes)
