"""Step definitions of features/mcbe.feature: the McBE service on scripted ports."""

from __future__ import annotations

import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from culturebias.adapters.judging.judge import GeneratorJudge
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
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
        self.options: dict[str, object] = {"prompt_set": "culturebias"}  # the scripted rules read its wording
        self.scored: list[str] = []  # PC texts, in the order scored
        self.judge_asked: list[tuple[str, int]] = []  # (first turn, earlier attempts) per judge request sent
        self.bs_asked: list[tuple[str, int]] = []  # the same for severity ratings
        self.rating_by_set: dict[str, str] = {}  # severity rating by prompt set, when it depends on it
        self.rating_by_text: dict[str, str] = {}  # severity rating of the sentence holding a text, when it depends on it
        self.last_task = ""

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


@given(parsers.parse('a model that rates severity "{reply}" for "{text}" and "{other}" for the others'))
def rating_model_by_sentence(world: World, reply: str, text: str, other: str):
    world.rating_by_text = {text: reply}
    world.bs_reply = other


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
        world.scored.append(continuation)
        return -nll * len(continuation)  # the scripted scorer counts characters as tokens

    def reply(request, prompt: str) -> str:
        first_turn = request.messages[0].content
        if "句子1：" in first_turn:
            first = _word_in(first_turn.split("句子1：")[1].split("\n")[0], words)
            second = _word_in(first_turn.split("句子2：")[1].split("\n")[0], words)
            return world.ss_reply(first, second)
        if "程度打分" in first_turn:  # both prompt sets ask for it so
            world.bs_asked.append((first_turn, sum(m.role == "assistant" for m in request.messages)))
            if world.rating_by_set:
                return world.rating_by_set["table7" if first_turn.startswith("以下") else "culturebias"]
            return next((r for text, r in world.rating_by_text.items() if text in first_turn), world.bs_reply)
        return "分析：" + first_turn.splitlines()[0][-12:]  # one analysis per sentence

    def judge(request, prompt: str) -> str:
        text = request.messages[0].content
        world.judge_asked.append((text, sum(m.role == "assistant" for m in request.messages)))
        for criterion in BA_CRITERIA:
            if f"（{criterion.name_zh}）" in text:
                return world.judge_marks[criterion.key]
        raise AssertionError(text)

    result = run_with_fakes(
        "mcbe",
        options={"tasks": tasks, "pc_decay": pc_decay, **world.options},
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


@then(parsers.parse('the overall score is undefined: "{text}"'))
def overall_undefined(world: World, text: str):
    assert world.done.metrics.overall is None
    assert world.done.not_measured is not None and text in world.done.not_measured


@then(parsers.parse('"{category}" has no "{task}" score'))
def no_score(world: World, category: str, task: str):
    scores = world.done.metrics.categories[category].task_scores()
    assert task in scores and scores[task] is None


# --- the judge-stopping rule, PC text, prompt sets, categories -----------------------------


@given(parsers.parse('{n:d} more BEIs in category "{category}"'))
def more_beis(world: World, n: int, category: str):
    for k in range(n):  # sentences of their own: identical requests would be asked once
        row = len(world.beis) + 2
        world.beis.append(
            BEI(category, "那天，", f"[PLH]说了第{k + 2}句话。", ("甲", "乙", "丙"), "子类", "参考解释。", 6.0, f"{category}.xlsx", row)
        )


@given(parsers.parse('3 more BEIs in categories "{categories}" with human severities {a:g}, {b:g} and {c:g}'))
def beis_in_categories(world: World, categories: str, a: float, b: float, c: float):
    for category, score in zip(categories.split(","), (a, b, c)):
        a_bei(world, category, "甲，乙，丙", score)


@given("a judge that never answers with a number")
def judge_without_numbers(world: World):
    world.judge_marks = {c.key: "很好" for c in BA_CRITERIA}


@given(parsers.parse('a model that rates every sentence {a} under "{first}" and {b} under "{second}"'))
def rating_by_prompt_set(world: World, a: str, first: str, b: str, second: str):
    world.rating_by_set = {first: a, second: b}


@when(parsers.parse('McBE runs the tasks "{tasks}" with the judge stopped after {k:d} replies of which more than {x:d}% hold no number'))
def run_with_stop_rule(world: World, tmp_path, tasks: str, k: int, x: int):
    world.options |= {"judge_probe": k, "judge_max_unparseable": x / 100}
    _run(world, tmp_path, tasks)


@when(parsers.parse('McBE runs the tasks "{tasks}" with "{key}" set to "{value}"'))
def run_with_option(world: World, tmp_path, tasks: str, key: str, value: str):
    world.options[key] = value
    _run(world, tmp_path, tasks)


@then(parsers.parse("the judge was asked {n:d} requests, each {m:d} times"))
def judge_asked(world: World, n: int, m: int):
    prompts = [text for text, _ in world.judge_asked]
    assert len(set(prompts)) == n
    assert all(prompts.count(p) == m for p in set(prompts))


@then(parsers.parse('the summary says "{task}" lost its score: {u:d} of the first {k:d} replies held no number, {ns:d} requests not sent, {b:d} BEIs unscored'))
def lost_score(world: World, task: str, u: int, k: int, ns: int, b: int):
    stop = (world.done.metrics.reply_stops or {})[task]
    assert (stop.effect, stop.unparseable, stop.probe, stop.not_sent, stop.unscored) == ("no_score", u, k, ns, b)
    assert world.done.metrics.tasks.present()[task] is None  # no score, not 0
    assert any(note.startswith(f"{task.upper()} has no score") for note in world.done.notes)


@then(parsers.parse('the summary says "{task}" was not retried: {u:d} of the first {k:d} replies held no number'))
def not_retried(world: World, task: str, u: int, k: int):
    stop = (world.done.metrics.reply_stops or {})[task]
    assert (stop.effect, stop.unparseable, stop.probe, stop.unscored) == ("no_retries", u, k, 0)


@then("nothing was stopped")
def nothing_stopped(world: World):
    assert world.done.metrics.reply_stops is None


@then("the severity ratings were asked once")
def asked_once(world: World):
    assert len(world.bs_asked) == len(world.beis) and all(retries == 0 for _, retries in world.bs_asked)


@then(parsers.parse('PC scored "{text}" first'))
def pc_scored_first(world: World, text: str):
    assert world.scored[0] == text


@then(parsers.parse('the summary says PC scored "{pc_text}"'))
def pc_text_in_summary(world: World, pc_text: str):
    assert world.done.metrics.pc_text == pc_text


@then(parsers.parse('the severity prompt began "{text}"'))
def severity_prompt(world: World, text: str):
    assert world.bs_asked[0][0].startswith(text)


def _four(text: str) -> list[float]:
    return [float(v) for v in text.replace(" and ", ", ").split(", ")]


@then(parsers.parse('the "{task}" scores of "{categories}" are {values}'))
def task_scores(world: World, task: str, categories: str, values: str):
    world.last_task = task
    names = categories.split(", ")
    world.options["_categories"] = names
    got = [world.done.metrics.categories[c].task_scores()[task] for c in names]
    assert got == pytest.approx(_four(values))


@then(parsers.parse('under "{name}" they are {values}'))
def variant_scores(world: World, name: str, values: str):
    variant = (world.done.metrics.prompt_variants or {})[name]
    names = world.options["_categories"]
    assert [variant.categories[c][world.last_task] for c in names] == pytest.approx(_four(values))


@then(parsers.parse('the "{task}" robustness of "{name}" has Spearman {rho:g} and Pearson {r:g} over {n:d} categories'))
def robustness_of(world: World, task: str, name: str, rho: float, r: float, n: int):
    cell = (world.done.metrics.prompt_variants or {})[name].robustness[task]
    assert cell.n == n
    assert cell.spearman == pytest.approx(rho, abs=5e-7) and cell.pearson == pytest.approx(r, abs=5e-7)


@when(parsers.parse('McBE is configured with "{key}" set to "{value}"'))
def configure(world: World, key: str, value: str):
    from culturebias.bootstrap.settings import load_settings
    from culturebias.domain.errors import ConfigError

    try:
        load_settings(assignments=[f"protocol.{key}={value}"]).protocol_options("mcbe")
    except ConfigError as error:
        world.error = error
    else:
        world.error = None


@then(parsers.parse('the configuration error names "{option}" and the known sets "{names}"'))
def configuration_error(world: World, option: str, names: str):
    message = str(world.error)
    assert option in message
    assert all(name in message for name in names.split(", "))


@when(parsers.parse('McBE reads the files "{first}" and "{second}"'))
def read_files(world: World, first: str, second: str):
    from culturebias.adapters.mcbe.files import parse_files
    from culturebias.testing.xlsx import write_xlsx

    header = ["context", "sentence", "words", "subtype", "explanation", "score"]
    row = ["上下文。", "[PLH]很能干。", "甲，乙", "能力", "解释。", 5]
    world.dataset = parse_files([(name, write_xlsx([header, row])) for name in (first, second)])


@then(parsers.parse('the categories are "{first}" and "{second}"'))
def categories_are(world: World, first: str, second: str):
    assert world.dataset.categories == [first, second]


@then(parsers.parse('a note names "{text}"'))
def note_names(world: World, text: str):
    assert any(text in note for note in world.dataset.notes)
