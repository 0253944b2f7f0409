"""Step definitions of features/libra.feature: the LIBRA service on scripted ports."""

from __future__ import annotations

import re

import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from culturebias.adapters.datasets.libra_files import triplet_from_fields
from culturebias.adapters.embeddings import BagOfWordsEmbedder
from culturebias.adapters.scripted.backend import ScriptedGenerator, ScriptedPseudoScorer, ScriptedScorer
from culturebias.domain.libra.metrics import eicat
from culturebias.domain.libra.options import LibraOptions
from culturebias.domain.libra.summary import LibraSummary
from culturebias.domain.libra.triplets import GlossaryEntry, LibraDataset
from culturebias.domain.libra.words import strip_diacritics
from culturebias.testing.context import run_with_fakes

scenarios("libra.feature")


class World:
    def __init__(self) -> None:
        self.triplets = []
        self.glossary: list[GlossaryEntry] = []
        self.lacking: set[str] = set()
        self.kind = "causal"
        self.can_generate = True
        self.values: dict[str, dict[str, float]] = {}
        self.definitions: dict[str, str] = {}
        self.summary: LibraSummary | None = None


@pytest.fixture
def world() -> World:
    return World()


def _rows(datatable) -> list[dict[str, str]]:
    header, *body = datatable
    return [{h.strip(): cell.strip() for h, cell in zip(header, row)} for row in body]


class LexiconWithout:
    """Knows every spelling except the given words (macrons or not)."""

    def __init__(self, lacking: set[str]):
        self._lacking = {strip_diacritics(w.casefold()) for w in lacking}

    def describe(self) -> str:
        return "test lexicon"

    def known(self, forms):
        return {f for f in forms if strip_diacritics(f.casefold()) not in self._lacking}


@given("the LIBRA triplets")
def the_triplets(world: World, datatable):
    world.triplets = [triplet_from_fields(row, file="feature", row=i) for i, row in enumerate(_rows(datatable), 2)]


@given("the glossary")
def the_glossary(world: World, datatable):
    world.glossary = [GlossaryEntry(row["term"], row["definition"]) for row in _rows(datatable)]


@given(parsers.re(r"a general lexicon that lacks (?P<words>.+)"))
def lexicon_lacking(world: World, words: str):
    world.lacking = set(re.findall(r'"([^"]+)"', words))


def _likelihoods(world: World, datatable) -> None:
    world.values = {
        row["id"]: {k: float(row[k]) for k in ("stereotyped", "anti_stereotyped", "unrelated")} for row in _rows(datatable)
    }


@given(parsers.parse("a scripted {kind} model with likelihoods"))
def scripted_model(world: World, kind: str, datatable):
    world.kind = kind
    _likelihoods(world, datatable)


@given("a scripted masked model that cannot generate, with likelihoods")
def masked_without_generation(world: World, datatable):
    world.kind = "masked"
    world.can_generate = False
    _likelihoods(world, datatable)


@given(parsers.parse('the model defines "{term}" as "{definition}"'))
def defines(world: World, term: str, definition: str):
    world.definitions[term] = definition


def _lookup(world: World):
    """(left, continuation) and sentence → the scenario's L value."""
    by_pair, by_sentence = {}, {}
    for triplet in world.triplets:
        for kind, value in world.values[triplet.id].items():
            by_pair[(triplet.left, triplet.filler(kind) + triplet.right)] = value
            by_sentence[triplet.sentence(kind)] = value
    return by_pair, by_sentence


def _reply(world: World):
    def rule(request, prompt: str) -> str:
        for term, definition in world.definitions.items():
            if f'"{term}"' in prompt:
                return definition
        return "I do not know."

    return rule


@when("LIBRA runs")
def libra_runs(world: World):
    by_pair, by_sentence = _lookup(world)
    causal = ScriptedScorer(lambda context, continuation: by_pair[(context, continuation)])
    masked = ScriptedPseudoScorer(lambda text, start, end: by_sentence[text])
    result = run_with_fakes(
        "libra",
        options=LibraOptions(embedder="bag-of-words"),
        dataset=LibraDataset(tuple(world.triplets), tuple(world.glossary)),
        scorer=causal if world.kind == "causal" else None,
        generator=ScriptedGenerator(_reply(world)) if world.can_generate else None,
        pseudo_scorer=masked if world.kind == "masked" else None,
        lexicons=lambda spec, min_frequency=0.0: LexiconWithout(world.lacking),
        embedders=lambda spec: BagOfWordsEmbedder(),
    )
    assert isinstance(result.summary, LibraSummary)
    world.summary = result.summary


def _summary(world: World) -> LibraSummary:
    assert world.summary is not None, "LIBRA has not run"
    return world.summary


@then("the overall scores are")
def overall_scores(world: World, datatable):
    expected = _rows(datatable)[0]
    overall = _summary(world).metrics.overall
    for key, value in expected.items():
        assert getattr(overall, key) == pytest.approx(float(value), abs=0.005), key


@then(parsers.parse("the overall bbs is {value:g}"))
def overall_bbs(world: World, value: float):
    assert _summary(world).metrics.overall.bbs == pytest.approx(value)


@then("the overall bbs and EiCAT are null")
def bbs_null(world: World):
    overall = _summary(world).metrics.overall
    assert overall.bbs is None and overall.eicat is None


@then(parsers.parse("{valid:d} triplets are valid and {invalid:d} invalid"))
def valid_counts(world: World, valid: int, invalid: int):
    summary = _summary(world)
    assert (summary.counts.valid_triplets, summary.counts.invalid_triplets) == (valid, invalid)
    assert (summary.metrics.overall.valid, summary.metrics.overall.invalid) == (valid, invalid)


@then(parsers.parse('triplet "{triplet_id}" is invalid because of "{term}"'))
def invalid_because(world: World, triplet_id: str, term: str):
    invalid = _summary(world).details.invalid_triplets
    assert invalid is not None and invalid[triplet_id] == [term]


@then(parsers.parse('the model type is "{kind}"'))
def model_type(world: World, kind: str):
    summary = _summary(world)
    assert summary.metrics.model_type == kind
    assert summary.counts.model_type == kind


@then(parsers.parse("{n:d} local word has no glossary definition"))
def missing_definitions(world: World, n: int):
    summary = _summary(world)
    assert summary.counts.local_words_without_definition == n
    words = summary.details.local_words
    assert words is not None, "the knowledge boundary was not checked"
    unchecked = [w for w in words if w.understood is None]
    assert len(unchecked) == n


@then(parsers.parse("EiCAT of lms {lms:g}, JSD {jsd:g} and bbs {bbs:g} is {expected:g} to within 0.01"))
def eicat_value(lms: float, jsd: float, bbs: float, expected: float):
    assert eicat(lms, jsd, bbs) == pytest.approx(expected, abs=0.01)
