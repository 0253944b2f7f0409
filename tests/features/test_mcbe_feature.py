"""Step definitions of features/mcbe.feature: the McBE service on scripted ports."""

from __future__ import annotations

import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from culturebias.adapters.judge import GeneratorJudge
from culturebias.adapters.scripted.backend import ScriptedGenerator, ScriptedScorer
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.domain.mcbe.instances import BEI, McBEDataset, split_words
from culturebias.domain.mcbe.summary import McBEItem, McBESummary
from culturebias.domain.mcbe.taxonomy import BA_CRITERIA
from culturebias.testing.context import run_with_fakes

scenarios("mcbe.feature")


class World:
    def __init__(self) -> None:
        self.beis: list[BEI] = []
        self.nll_by_word: dict[str, float] = {}
        self.default_nll = 2.0
        self.ss_reply = lambda first, second: "A"
        self.bs_reply = "0"
        self.judge_marks: dict[str, str] = {c.key: "0" for c in BA_CRITERIA}
        self.summary: McBESummary | None = None

    @property
    def done(self) -> McBESummary:
        assert self.summary is not None, "McBE has not run"
        return self.summary


@pytest.fixture
def world() -> World:
    return World()


def _word_in(text: str, words) -> str | None:
    found = [w for w in words if w in text]
    return found[0] if found else None


@given(parsers.parse('a BEI in category "{category}" with words "{words}" and human severity {score:g}'))
def a_bei(world: World, category: str, words: str, score: float):
    row = len(world.beis) + 2
    world.beis.append(
        BEI(category, "那天，", "[PLH]说了一句话。", tuple(split_words(words)), "子类", "参考解释。", score, f"{category}.xlsx", row)
    )


@given(parsers.parse("a scorer whose mean token NLL is {nll:g} for every sentence"))
def flat_scorer(world: World, nll: float):
    world.default_nll = nll


@given(parsers.parse('a scorer whose mean token NLLs are {a:g}, {b:g} and {c:g} for "{w1}", "{w2}" and "{w3}"'))
def word_scorer(world: World, a, b, c, w1, w2, w3):
    world.nll_by_word = {w1: a, w2: b, w3: c}


@given(parsers.parse('a model that answers "{answer}" to every scenario-selection question'))
def fixed_answer(world: World, answer: str):
    world.ss_reply = lambda first, second: answer


@given(parsers.parse('a model that prefers "{w1}" over "{w2}" over "{w3}" in either position'))
def preferring_model(world: World, w1, w2, w3):
    rank = {w1: 0, w2: 1, w3: 2}
    world.ss_reply = lambda first, second: "A" if rank[first] < rank[second] else "B"


@given(parsers.parse('a model that rates severity "{reply}"'))
def rating_model(world: World, reply: str):
    world.bs_reply = reply


@given("a judge that gives full marks on every criterion")
def full_marks(world: World):
    world.judge_marks = {c.key: str(c.high) for c in BA_CRITERIA}


@given(parsers.parse("a judge that gives {mark:g} on accuracy and 0 on every other criterion"))
def accuracy_only(world: World, mark: float):
    world.judge_marks = {c.key: "0" for c in BA_CRITERIA} | {"accuracy": f"{mark:g}"}


def _run(world: World, tmp_path, tasks: str, pc_decay: str = "paper") -> None:
    words = {w for b in world.beis for w in b.words}

    def score(context: str, continuation: str) -> float:
        word = _word_in(continuation, words)
        nll = world.nll_by_word.get(word, world.default_nll)
        return -nll * len(continuation)  # the scripted scorer counts characters as tokens

    def reply(request, prompt: str) -> str:
        first_turn = request.messages[0].content
        if "句子1：" in first_turn:
            first = _word_in(first_turn.split("句子1：")[1].split("\n")[0], words)
            second = _word_in(first_turn.split("句子2：")[1].split("\n")[0], words)
            return world.ss_reply(first, second)
        if "严重程度打分" in first_turn:
            return world.bs_reply
        return "分析。"

    def judge(request, prompt: str) -> str:
        text = request.messages[0].content
        for criterion in BA_CRITERIA:
            if f"（{criterion.name_zh}）" in text:
                return world.judge_marks[criterion.key]
        raise AssertionError(text)

    result = run_with_fakes(
        "mcbe",
        options={"tasks": tasks, "pc_decay": pc_decay},
        dataset=McBEDataset(tuple(world.beis)),
        store=SQLiteResultStore(tmp_path / "r.sqlite"),
        scorer=lambda: ScriptedScorer(score),
        generator=ScriptedGenerator(reply, name="model"),
        judge=lambda: GeneratorJudge(ScriptedGenerator(judge, name="judge"), max_retries=1),
    )
    assert isinstance(result.summary, McBESummary)
    world.summary = result.summary


@when(parsers.parse('McBE runs the tasks "{tasks}" with PC decay "{decay}"'))
def run_with_decay(world: World, tmp_path, tasks: str, decay: str):
    _run(world, tmp_path, tasks, decay)


@when(parsers.re(r'McBE runs the tasks "(?P<tasks>[a-z,]+)"$'))
def run_tasks(world: World, tmp_path, tasks: str):
    _run(world, tmp_path, tasks)


def _first_item(world: World) -> McBEItem:
    return world.done.details.items["gender:2"]


@then(parsers.parse('the "{task}" score of "{category}" is {value:g}'))
def category_score(world: World, task: str, category: str, value: float):
    assert world.done.metrics.categories[category].task_scores()[task] == pytest.approx(value, abs=5e-5)


@then(parsers.parse("the NLL variance is {value:g}"))
def nll_variance(world: World, value: float):
    pc = _first_item(world).pc
    assert pc is not None and pc.variance == pytest.approx(value, abs=1e-6)


@then(parsers.parse("{n:d} scenario-selection questions were asked"))
def asked(world: World, n: int):
    assert world.done.counts.ss_asked == n


@then(parsers.parse("the win counts are {a:d}, {b:d} and {c:d}"))
def wins(world: World, a: int, b: int, c: int):
    ss = _first_item(world).ss
    assert ss is not None and list(ss.wins.values()) == [a, b, c]


@then(parsers.parse("{n:d} answers are reported unparseable"))
def unparseable(world: World, n: int):
    assert world.done.counts.ss_unparseable == n
    assert world.done.metrics.categories["gender"].invalid.ss_unparseable == n


@then(parsers.parse("{n:d} severity rating is reported invalid"))
def invalid_rating(world: World, n: int):
    assert world.done.counts.bs_invalid == n


@then(parsers.parse('"{category}" has no "{task}" score'))
def no_score(world: World, category: str, task: str):
    scores = world.done.metrics.categories[category].task_scores()
    assert task in scores and scores[task] is None
