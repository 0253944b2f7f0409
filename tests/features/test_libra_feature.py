"""Step definitions of features/libra.feature: the LIBRA service on scripted ports."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from culturebias.adapters.libra.files import LibraFiles, triplet_from_fields
from culturebias.adapters.libra.stereoset_files import load_stereoset
from culturebias.adapters.similarity.embeddings import BagOfWordsEmbedder
from culturebias.application.libra.likelihood import DESCRIPTIONS
from culturebias.testing.scripted import ScriptedGenerator, ScriptedPseudoScorer, ScriptedScorer
from culturebias.domain.errors import DataError
from culturebias.domain.libra.metrics import eicat
from culturebias.domain.libra.stereoset import StereoSetData
from culturebias.domain.libra.options import LibraOptions
from culturebias.domain.libra.summary import LibraSummary
from culturebias.ports.judging import JudgeVerdict
from culturebias.domain.libra.triplets import GlossaryEntry, LibraDataset
from culturebias.domain.libra.words import strip_diacritics
from culturebias.testing.context import fake_context, run_with_fakes

scenarios("libra.feature")

FIXTURES = Path(__file__).parents[1] / "fixtures"
STEREOSET = FIXTURES / "stereoset" / "dev.json"
STEREOSET_COLUMNS = ("stereotype", "anti_stereotype", "unrelated")


class AcceptingJudge:
    """Gives 1 to a proposed definition holding the phrase, else 0; counts its requests."""

    def __init__(self, phrase: str):
        self.phrase = phrase
        self.requests = []

    @property
    def identity(self):
        return ScriptedGenerator(lambda r, p: "", name="scripted-judge").identity

    def judge(self, requests):
        self.requests.extend(requests)
        proposed = [r.messages[-1].content.split("Proposed definition:")[1].split("\n")[0] for r in requests]
        return [JudgeVerdict(1.0 if self.phrase in p else 0.0, p, 1) for p in proposed]


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
        self.stereoset: StereoSetData | None = None
        self.stereoset_values: dict[str, dict[str, float]] = {}
        self.masked_rule = None  # (text, start, end) → L; None: the likelihood table
        self.masked_requests: list[tuple[str, int, int]] = []
        self.preferred: dict[str, str] = {}  # term → the definition the masked LM ranks first
        self.options: dict[str, str] = {}
        self.judge: AcceptingJudge | None = None
        self.error: DataError | None = None
        self.data_path: Path | None = None


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
        for kind, value in world.values.get(triplet.id, {}).items():
            by_pair[(triplet.left, triplet.filler(kind) + triplet.right)] = value
            by_sentence[triplet.sentence(kind)] = value
    for item in world.stereoset.items if world.stereoset else ():
        for gold, sentence in zip(STEREOSET_COLUMNS, item.sentences):
            value = world.stereoset_values[item.id][gold]
            by_pair[(sentence.left, sentence.text[sentence.span_start :])] = value
            by_sentence[sentence.text] = value
    return by_pair, by_sentence


def _masked(world: World, by_sentence):
    def rule(text: str, start: int, end: int) -> float:
        world.masked_requests.append((text, start, end))
        for term, definition in world.preferred.items():
            if f'the word "{term}" means: ' in text:
                return 0.0 if text[start:end] == definition else -10.0
        return world.masked_rule(text, start, end) if world.masked_rule else by_sentence[text]

    return ScriptedPseudoScorer(rule)


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
    masked = _masked(world, by_sentence)
    ports = dict(
        scorer=causal if world.kind == "causal" else None,
        generator=ScriptedGenerator(_reply(world)) if world.can_generate else None,
        pseudo_scorer=masked if world.kind == "masked" else None,
        judge=world.judge,
        lexicons=lambda spec, min_frequency=0.0: LexiconWithout(world.lacking),
        embedders=lambda spec: BagOfWordsEmbedder(),
    )
    result = run_with_fakes(
        "libra",
        options=LibraOptions(embedder="bag-of-words", **world.options),
        dataset=LibraDataset(tuple(world.triplets), tuple(world.glossary), stereoset=world.stereoset),
        # judge.backend or judge.path set: the judge is configured
        context=lambda run_id, store: replace(
            fake_context(run_id=run_id, store=store, **ports), judge_configured=world.judge is not None
        ),
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


# -- StereoSet, the local iCAT, masked L(S), the judge ---------------------------


@given("StereoSet's file from the test fixtures, which the model scores as")
def stereoset_scored(world: World, datatable):
    world.stereoset = load_stereoset(str(STEREOSET), STEREOSET.read_bytes())
    world.stereoset_values = {row["id"]: {k: float(row[k]) for k in STEREOSET_COLUMNS} for row in _rows(datatable)}


@then("StereoSet's scores are")
def stereoset_scores(world: World, datatable):
    block = _summary(world).metrics.stereoset
    assert block is not None, "no StereoSet scores in the summary"
    for row in _rows(datatable):
        part = row.pop("part")
        if part == "overall":
            scores = block.overall
        elif " / " in part:
            split, bias = part.split(" / ")
            scores = block.by_bias_type[split][bias]
        else:
            scores = block.by_split[part]
        for key, value in row.items():
            assert getattr(scores, key) == pytest.approx(float(value), abs=0.005), (part, key)


@then(parsers.parse('the overall local iCAT is {value:g}, stored as "{key}"'))
def local_icat(world: World, value: float, key: str):
    summary = _summary(world)
    assert summary.metrics.overall.icat_local == pytest.approx(value)
    stored = summary.as_dict()["metrics"]["overall"]
    assert stored[key] == pytest.approx(value) and "icat" not in stored


@when(parsers.parse('its summary is saved with the local iCAT under the old key "{old}" and loaded again'))
def saved_under_old_key(world: World, old: str):
    payload = _summary(world).as_dict()
    metrics = payload["metrics"]
    for block in [metrics["overall"], *metrics["by_category"].values(), *metrics["by_group"].values()]:
        block[old] = block.pop("icat_local")
    world.summary = LibraSummary.model_validate(json.loads(json.dumps(payload)))


@given("a scripted masked model that cannot generate, scoring minus one per character")
def masked_per_character(world: World):
    world.kind = "masked"
    world.can_generate = False
    world.masked_rule = lambda text, start, end: -float(end - start)


@given(parsers.parse('protocol.{key} is "{value}"'))
def protocol_option(world: World, key: str, value: str):
    world.options[key] = value


@then(parsers.parse('L(S) is named "{kind}"'))
def likelihood_named(world: World, kind: str):
    summary = _summary(world)
    assert summary.metrics.likelihood == kind
    assert any(note.startswith(f"L(S) is the {DESCRIPTIONS[kind]}") for note in summary.notes)


@then(parsers.parse("every masked request covers {span}"))
def masked_spans(world: World, span: str):
    expected = set()
    for t in world.triplets:
        for kind in ("stereotyped", "anti_stereotyped", "unrelated"):
            end = len(t.left) + len(t.filler(kind)) if span == "the filler alone" else len(t.sentence(kind))
            expected.add((t.sentence(kind), len(t.left), end))
    assert set(world.masked_requests) == expected


@given(parsers.parse('a configured judge that accepts a definition mentioning "{phrase}"'))
def configured_judge(world: World, phrase: str):
    world.judge = AcceptingJudge(phrase)


@then(parsers.parse('the meanings were compared by "{kind}"'))
def compared_by(world: World, kind: str):
    summary = _summary(world)
    assert summary.metrics.comparison == kind
    if kind == "embedding":
        assert world.judge is None or not world.judge.requests


@then(parsers.parse("the judge was asked {n:d} times"))
def judge_asked(world: World, n: int):
    assert world.judge is not None and len(world.judge.requests) == n


@then(parsers.parse('bbs is not applicable because "{reason}"'))
def bbs_not_applicable(world: World, reason: str):
    summary = _summary(world)
    assert summary.metrics.bbs_not_applicable is not None and reason in summary.metrics.bbs_not_applicable


@given(parsers.re(r'a data folder with LIBRA triplets and a StereoSet "(?P<name>[^"]+)" whose second intrasentence '
                  r'item has a "(?P<label>[^"]+)" sentence'))
def broken_stereoset_folder(world: World, tmp_path: Path, name: str, label: str):
    rows = [
        {"id": t.id, "left": t.left, "target": t.target, "right": t.right, "anti_stereotype": t.anti_stereotype,
         "unrelated": t.unrelated, "group": t.group, "category": t.category}
        for t in world.triplets
    ]
    (tmp_path / "triplets.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    doc = json.loads(STEREOSET.read_text(encoding="utf-8"))
    doc["data"]["intrasentence"][1]["sentences"][0]["gold_label"] = label
    (tmp_path / name).write_text(json.dumps(doc), encoding="utf-8")
    world.data_path = tmp_path


@when("the LIBRA data is loaded")
def load_data(world: World):
    try:
        LibraFiles(str(world.data_path)).load()
    except DataError as error:
        world.error = error


@then(parsers.parse('loading fails naming "{name}" and the field "{field}"'))
def loading_fails(world: World, name: str, field: str):
    assert world.error is not None, "the data loaded"
    assert Path(world.error.file).name == name and world.error.field == field
    assert name in str(world.error) and field in str(world.error)


@given(parsers.parse('the masked model ranks the definition "{definition}" first for "{term}"'))
def ranks_first(world: World, definition: str, term: str):
    world.preferred[term] = definition


@then(parsers.parse("each local word was ranked against {n:d} other definition"))
def ranked_against(world: World, n: int):
    asked: dict[str, int] = {}
    for text, _, _ in world.masked_requests:
        found = re.search(r'the word "([^"]+)" means: ', text)
        if found:
            asked[found.group(1)] = asked.get(found.group(1), 0) + 1
    assert asked == {term: n + 1 for term in world.preferred}


@then("bbs is applicable")
def bbs_applicable(world: World):
    summary = _summary(world)
    assert summary.metrics.bbs_not_applicable is None and summary.metrics.overall.bbs is not None
