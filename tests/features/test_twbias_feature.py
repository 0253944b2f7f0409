"""Step definitions of features/twbias.feature: the TWBias service on a scripted scorer."""

from __future__ import annotations

import math

import pytest
from pytest_bdd import given, parsers, scenarios, then, when
from scipy import stats

from culturebias.testing.scripted import ScriptedScorer, ScriptedTemplater
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.application.twbias.service import TWBiasOutcome, TWBiasService
from culturebias.domain.requests import ChatMessage
from culturebias.domain.twbias.metrics import bias_ratio, effect_size
from culturebias.domain.twbias.model import (
    AxisData,
    BiasSentence,
    SentenceSet,
    TargetAttribute,
    TargetGroup,
    TWBiasDataset,
)
from culturebias.domain.twbias.options import TWBiasOptions
from culturebias.domain.twbias.specification import replace_terms
from culturebias.domain.twbias.summary import SpecificationBlock
from culturebias.testing.context import fake_context, run_with_fakes

scenarios("twbias.feature")

PROMPTS = {"0": "", "00": "", **{str(i): f"使用者提示{i}" for i in range(1, 11)}}


class World:
    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []  # (male term, female term)
        self.female: list[str] = []
        self.loglik: dict[str, float] = {}  # per-token log-likelihood of a text
        self.per_prompt: dict[str, float] = {}  # prompt type → flat per-token log-likelihood
        self.outcome: TWBiasOutcome | None = None
        self.p_values: list[float] = []
        self.effects: list[float] = []
        self.computed: tuple[float, float] | None = None
        self.rows: list[tuple[float, float]] = []  # (original, replaced) per-token log-likelihood per row
        self.report = ""
        self.min_pairs: int | None = 10  # protocol.min_pairs (None: not set, the default)

    def options(self, types: str, **more: str) -> dict[str, str | int]:
        stricter = {} if self.min_pairs is None else {"min_pairs": self.min_pairs}
        return {"groups": "gender", "prompt_types": types, **stricter, **more}

    def female_to_male(self) -> tuple[tuple[str, str], ...]:
        return tuple((f, m) for m, f in self.pairs)

    def add_female(self, text: str, original: float, replaced: float | None) -> None:
        self.female.append(text)
        self.loglik[text] = original
        if replaced is not None:
            self.rows.append((original, replaced))
            for swapped in replace_terms(text, self.female_to_male()):
                self.loglik[swapped] = replaced


@pytest.fixture
def world() -> World:
    return World()


@given(parsers.parse('the gender term pairs "{first}" and "{second}"'))
def term_pairs(world: World, first: str, second: str):
    world.pairs = [tuple(pair.split("/")) for pair in (first, second)]  # type: ignore[misc]


@given(parsers.re(r"a prompt type is tested from (?P<n>\d+) sentence pairs on, .*"))
def min_pairs(world: World, n: str):
    world.min_pairs = int(n)


@given("a prompt type is tested wherever the t-test is defined, the default")
def no_minimum(world: World):
    world.min_pairs = None


@given("female sentences with per-token log-likelihoods")
def female_table(world: World, datatable):
    header, *rows = datatable
    for row in rows:
        cells = dict(zip(header, row))
        world.add_female(cells["sentence"], float(cells["original"]), float(cells["replaced"]))


@given(parsers.parse("{n:d} female sentences whose replacements are {gap:g} nats per token less likely"))
def many_female(world: World, n: int, gap: float):
    for i in range(n):
        original = -(1.0 + 0.02 * i)
        world.add_female(f"女人第{i}句", original, original - gap)


@given(parsers.parse('the female sentence "{text}" with per-token log-likelihood {original:g} and replaced {replaced:g}'))
def one_female(world: World, text: str, original: float, replaced: float):
    world.add_female(text, original, replaced)


@given(parsers.parse('the female sentence "{text}" with per-token log-likelihood {original:g}'))
def one_female_alone(world: World, text: str, original: float):
    world.add_female(text, original, None)


@given(parsers.parse('the sentence "{text}" has per-token log-likelihood {value:g}'))
def one_text(world: World, text: str, value: float):
    world.loglik[text] = value


@given(parsers.parse('under prompt type "{ptype}" every sentence and replacement has per-token log-likelihood {value:g}'))
def flat_prompt(world: World, ptype: str, value: float):
    world.per_prompt[ptype] = value


def _dataset(world: World) -> TWBiasDataset:
    male_terms = tuple(m for m, _ in world.pairs)
    female_terms = tuple(f for _, f in world.pairs)
    groups = {"T1": TargetGroup("gender", "T1", male_terms), "T2": TargetGroup("gender", "T2", female_terms)}
    female = tuple(
        BiasSentence(str(i), text, 0, (TargetAttribute(female_terms[0], None),), "gender/label_data_female.csv", i + 2)
        for i, text in enumerate(world.female)
    )
    sets = {
        "T2": SentenceSet("gender", "T2", "female", "gender/label_data_female.csv", female, {}, "gender/female-Attribute.csv"),
        "T1": SentenceSet("gender", "T1", "male", "gender/label_data_male.csv", (), {}, "gender/male-Attribute.csv"),
    }
    rows = tuple({"T1": m, "T2": f} for m, f in world.pairs)
    return TWBiasDataset(axes={"gender": AxisData("gender", groups, rows, sets)}, prompts=PROMPTS)


def _rule(world: World):
    templater = ScriptedTemplater()
    context_type = {templater.render([ChatMessage("user", PROMPTS[t] if t != "00" else "")]): t for t in PROMPTS if t != "0"}
    context_type[""] = "0"

    def rule(context: str, text: str) -> float:
        flat = world.per_prompt.get(context_type[context])
        return (flat if flat is not None else world.loglik[text]) * len(text)  # scripted tokens are characters

    return rule


@when(parsers.parse('TWBias runs the female specification on prompt types "{types}"'))
def run_female(world: World, types: str, tmp_path):
    service = TWBiasService(TWBiasOptions.model_validate(world.options(types)))
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    ctx = fake_context(scorer=ScriptedScorer(_rule(world)), templater=ScriptedTemplater, store=store, run_id="feature", chunk_size=2048)
    plan = service.preflight(ctx)
    world.outcome = service.run(ctx, _dataset(world), plan)
    store.close()


@when(parsers.parse('TWBias runs the female specification on prompt types "{types}" with "{setting}"'))
def run_female_with(world: World, types: str, setting: str, tmp_path):
    """The whole run (summary and report) with one ``protocol.<key>=<value>`` setting."""
    key, value = setting.split("=", 1)
    result = run_with_fakes(
        "twbias",
        options=world.options(types, **{key: value}),
        dataset=_dataset(world),
        out_dir=tmp_path / "out",
        scorer=ScriptedScorer(_rule(world)),
        templater=ScriptedTemplater,
    )
    world.outcome = result.summary  # type: ignore[assignment]  # metrics, counts and details as an outcome's
    world.report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")


def _female(world: World) -> SpecificationBlock:
    assert world.outcome is not None and world.outcome.metrics.gender is not None
    return world.outcome.metrics.gender["female"]


@then(parsers.parse("the female bias ratio is {value:g}"))
def ratio_is(world: World, value: float):
    assert _female(world).bias_ratio == pytest.approx(value)


@then("the female bias ratio is undefined")
def ratio_undefined(world: World):
    assert _female(world).bias_ratio is None and _female(world).n_prompts == 0  # NaN in the domain, null in the summary


@then(parsers.parse("the female bias ratio counts {n:d} user prompts"))
def ratio_counts(world: World, n: int):
    assert _female(world).n_prompts == n


@then(parsers.parse("the female effect size is {value:g}"))
def effect_is(world: World, value: float):
    assert _female(world).effect_size == pytest.approx(value)


@then("the female effect size is positive")
def effect_positive(world: World):
    assert _female(world).effect_size > 0


@then("the female effect size is negative")
def effect_negative(world: World):
    assert _female(world).effect_size < 0


@then(parsers.parse('the female effect size equals the Cohen\'s d_z of prompt type "{ptype}"'))
def effect_is_dz_of(world: World, ptype: str):
    dz = _female(world).prompts[ptype].cohens_dz
    assert dz > 0 and _female(world).effect_size == pytest.approx(dz)


@then(parsers.parse('under prompt type "{ptype}" {n:d} rows were tested and {k:d} outliers dropped'))
def rows_tested(world: World, ptype: str, n: int, k: int):
    stats = _female(world).prompts[ptype]
    assert (stats.n, stats.n_outliers) == (n, k)


@then(parsers.parse('under prompt type "{ptype}" the mean replace PPL is {value:g}'))
def mean_replace(world: World, ptype: str, value: float):
    assert _female(world).prompts[ptype].mean_replace_ppl == pytest.approx(value, abs=1e-6)


@then(parsers.parse('under prompt type "{ptype}" the test says "{text}"'))
def untested(world: World, ptype: str, text: str):
    reason = _female(world).prompts[ptype].untested
    assert reason is not None and text in reason


@then(parsers.parse('under prompt type "{ptype}" the test is flagged "{text}"'))
def flagged(world: World, ptype: str, text: str):
    stats = _female(world).prompts[ptype]
    assert stats.untested is None and stats.few_pairs == text and stats.p_value is not None


@then(parsers.parse('the female headline is flagged "{text}"'))
def headline_flagged(world: World, text: str):
    assert _female(world).few_pairs is not None and _female(world).few_pairs.startswith(text)


@then(parsers.parse('the card says first "{text}"'))
def card_first(world: World, text: str):
    from culturebias.adapters.reports.html.headline_card import warnings
    from culturebias.domain.twbias.headlines import HEADLINES

    assert warnings(world.outcome, HEADLINES)[0].startswith(text)  # type: ignore[arg-type]  # a TWBiasSummary here


@then(parsers.parse('prompt type "{ptype}" is not significant and has no t, p or effect size'))
def not_tested(world: World, ptype: str):
    stats = _female(world).prompts[ptype]
    assert not stats.significant and (stats.t, stats.p_value, stats.cohens_d, stats.cohens_dz) == (None, None, None, None)
    assert stats.n == 3 and stats.mean_origin_ppl is not None  # the rows and their means are still reported


@then(parsers.parse('the run is not measured: "{text}"'))
def not_measured(world: World, text: str):
    reason = getattr(world.outcome, "not_measured", None)
    assert reason is not None and text in reason


@then(parsers.parse('prompt type "{ptype}" is significant'))
def significant(world: World, ptype: str):
    assert _female(world).prompts[ptype].significant is True


@then(parsers.parse('{n:d} sentence is reported skipped for "{reason}"'))
def skipped(world: World, n: int, reason: str):
    assert world.outcome.counts.skipped == {reason: n}
    assert [s.reason for s in world.outcome.details.skips] == [reason] * n


@given(parsers.parse("prompt p-values {p_values} with Cohen's d {effects}"))
def given_p_values(world: World, p_values: str, effects: str):
    world.p_values = [float(v) for v in p_values.split(",")]
    world.effects = [float(v) for v in effects.split(",")]


@when(parsers.parse("the bias ratio and effect size are computed at alpha {alpha:g}"))
def compute(world: World, alpha: float):
    world.computed = (bias_ratio(world.p_values, alpha), effect_size(world.p_values, world.effects, alpha))


@then(parsers.parse("the bias ratio is {ratio:g} and the effect size is {effect:g}"))
def computed_values(world: World, ratio: float, effect: float):
    assert world.computed == pytest.approx((ratio, effect), abs=1e-4)


@then(parsers.parse('under prompt type "{ptype}" t is {t_sign} and d_z is {dz_sign}'))
def t_and_dz_signs(world: World, ptype: str, t_sign: str, dz_sign: str):
    stats_ = _female(world).prompts[ptype]
    sign = {"negative": -1.0, "positive": 1.0}
    assert math.copysign(1.0, stats_.t) == sign[t_sign] and math.copysign(1.0, stats_.cohens_dz) == sign[dz_sign]


TESTS = {
    "ttest_rel": stats.ttest_rel,
    "ttest_ind": lambda a, b: stats.ttest_ind(a, b, equal_var=True),
    "ttest_ind equal_var=False": lambda a, b: stats.ttest_ind(a, b, equal_var=False),
}


@then(parsers.parse('under prompt type "{ptype}" t and p are scipy\'s {function} of the origin and replace PPLs, in that order'))
def t_and_p_are_scipys(world: World, ptype: str, function: str):
    origin = [math.exp(-o) for o, _ in world.rows]  # a constant per-token log-likelihood: PPL = exp(-it)
    replace = [math.exp(-r) for _, r in world.rows]
    expected = TESTS[function](origin, replace)
    got = _female(world).prompts[ptype]
    assert (got.t, got.p_value) == (pytest.approx(float(expected.statistic), abs=1e-9), pytest.approx(float(expected.pvalue), abs=1e-12))


@then(parsers.parse('the summary records {field} "{value}"'))
def summary_records(world: World, field: str, value: str):
    assert getattr(world.outcome.metrics.analysis, field) == value


@then(parsers.parse('the report says "{text}"'))
def report_says(world: World, text: str):
    assert text in world.report
