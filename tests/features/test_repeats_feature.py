"""Step definitions of features/repeats.feature: McBE's BS task on a scripted model, repeated."""

from __future__ import annotations

import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from culturebias.testing.scripted import ScriptedGenerator
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.domain.mcbe.instances import BEI, McBEDataset, split_words
from culturebias.domain.mcbe.summary import McBESummary
from culturebias.domain.sampling import SamplingSettings
from culturebias.testing.context import run_with_fakes

scenarios("repeats.feature")


class World:
    def __init__(self) -> None:
        self.beis: list[BEI] = []
        self.asked = 0
        self.reply = lambda request: "0"
        self.summary: McBESummary | None = None

    @property
    def done(self) -> McBESummary:
        assert self.summary is not None, "McBE has not run"
        return self.summary


@pytest.fixture
def world() -> World:
    return World()


@given(parsers.parse('a BEI in category "{category}" with words "{words}" and human severity {score:g}'))
def a_bei(world: World, category: str, words: str, score: float):
    world.beis.append(BEI(category, "那天，", "[PLH]说了一句话。", tuple(split_words(words)), "子类", "参考解释。", score, f"{category}.xlsx", 2))


@given("a model that rates severity with the last digit of its sampling seed")
def seed_rater(world: World):
    world.reply = lambda request: str(request.params.seed % 10)


def _run(world: World, tmp_path, tasks: str, repeats: int, sampling: SamplingSettings) -> None:
    def reply(request, prompt: str) -> str:
        world.asked += 1
        return world.reply(request)

    result = run_with_fakes(
        "mcbe",
        options={"tasks": tasks},
        dataset=McBEDataset(tuple(world.beis)),
        store=SQLiteResultStore(tmp_path / "r.sqlite"),
        generator=ScriptedGenerator(reply, name="model"),
        repeats=repeats,
        sampling=sampling,
        out_dir=tmp_path / "out",
    )
    world.out = tmp_path / "out"
    assert isinstance(result.summary, McBESummary)
    world.summary = result.summary


@when(parsers.parse('McBE runs the tasks "{tasks}" with {n:d} repeats and greedy decoding'))
def greedy_repeats(world: World, tmp_path, tasks: str, n: int):
    _run(world, tmp_path, tasks, n, SamplingSettings())


@when(parsers.parse('McBE runs the tasks "{tasks}" with {n:d} repeats sampling at temperature {t:g} with seed {seed:d}'))
def sampled_repeats(world: World, tmp_path, tasks: str, n: int, t: float, seed: int):
    _run(world, tmp_path, tasks, n, SamplingSettings(temperature=t, seed=seed))


@then(parsers.parse("the summary lists {n:d} repeats with seeds {a:d}, {b:d}, {c:d} and {d:d}"))
def repeats_with_seeds(world: World, n: int, a: int, b: int, c: int, d: int):
    block = world.done.repeats
    assert block is not None and block.n == n and len(block.runs) == n and block.sampling == "greedy"
    assert [run.seed for run in block.runs] == [a, b, c, d]


@then(parsers.parse('the headline "{name}" is {mean:g} ± {std:g} over {n:d} repeats'))
def mean_and_std(world: World, name: str, mean: float, std: float, n: int):
    stat = world.done.repeats.headline[name]
    assert (stat.mean, stat.std, stat.n) == (pytest.approx(mean), pytest.approx(std, abs=5e-5), n)


@then(parsers.parse("the model was asked {n:d} question"))
@then(parsers.parse("the model was asked {n:d} questions"))
def asked(world: World, n: int):
    assert world.asked == n


@then(parsers.parse("the repeats sampled with seeds {a:d}, {b:d}, {c:d} and {d:d}"))
def seeds(world: World, a: int, b: int, c: int, d: int):
    assert [run.seed for run in world.done.repeats.runs] == [a, b, c, d]


@then(parsers.parse('the headline "{name}" of the repeats is {a:g}, {b:g}, {c:g} and {d:g}'))
def per_repeat(world: World, name: str, a: float, b: float, c: float, d: float):
    assert [run.headline[name] for run in world.done.repeats.runs] == pytest.approx([a, b, c, d])


@then("the summary's metrics are those of the first repeat")
def first_repeat(world: World):
    block = world.done.repeats
    assert block.metrics_from == 0 and world.done.metrics.overall == pytest.approx(block.runs[0].headline["overall"])


def _stat(stat, mean: float, std: float) -> None:
    assert stat is not None and stat.n == 4
    assert (stat.mean, stat.std) == (pytest.approx(mean), pytest.approx(std, abs=5e-5))


@then(parsers.parse('the "{task}" score of "{category}" over the runs is {mean:g} ± {std:g}'))
def cell_over_runs(world: World, task: str, category: str, mean: float, std: float):
    _stat(world.done.metrics.repeat_means.categories[category][task], mean, std)


@then(parsers.parse('the "{task}" task score over the runs is {mean:g} ± {std:g}'))
def task_over_runs(world: World, task: str, mean: float, std: float):
    _stat(world.done.metrics.repeat_means.tasks[task], mean, std)


@then(parsers.parse("the overall score over the runs is {mean:g} ± {std:g}"))
def overall_over_runs(world: World, mean: float, std: float):
    _stat(world.done.metrics.repeat_means.overall, mean, std)
    # the generic headline block agrees with it
    assert world.done.repeats.headline["overall"].mean == pytest.approx(mean)


@then(parsers.parse('the report shows "{text}" for "{category}"'))
def report_shows(world: World, text: str, category: str):
    report = (world.out / "report.md").read_text(encoding="utf-8")
    [row] = [line for line in report.splitlines() if line.startswith(f"| {category} |") and "±" in line]
    assert text in row
