"""A scoring reply that stays invalid after the retries is counted by every scoring protocol, never scored 0.0,
and its item left out: TWBias, KoBBQ (likelihood), McBE PC and LIBRA, through the openai backend on a
loopback server; the count is stored with the result, so ``--resume`` counts it the same way.

Each test first runs healthy, then again with a fault aimed at one scoring request by its exact prompt
(``when=`` the prompt as JSON text), so nothing depends on request order or timing.
"""

from __future__ import annotations

import json
import math
import random

import pytest

from culturebias.adapters.libra.files import triplet_from_fields
from culturebias.adapters.similarity.embeddings import BagOfWordsEmbedder
from culturebias.adapters.openai.backend import create_backend
from culturebias.adapters.openai.retry_policy import Backoff
from culturebias.adapters.openai.options import OpenAIOptions
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
from culturebias.adapters.stores.memory_store import MemoryResultStore
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.domain.libra.options import LibraOptions
from culturebias.domain.libra.triplets import GlossaryEntry, LibraDataset
from culturebias.domain.mcbe.instances import BEI, McBEDataset
from culturebias.domain.twbias.model import (
    Attribute,
    AxisData,
    BiasSentence,
    SentenceSet,
    TargetAttribute,
    TargetGroup,
    TWBiasDataset,
)
from culturebias.testing.context import run_with_fakes
from culturebias.testing.openai_server import CharacterTokenSource, OpenAITestServer

MODEL = "served-model"
RETRIES = 1  # two attempts per request


def cost(context: str, character: str) -> float:
    """Differs by character, so options and sentences score differently."""
    return -0.5 - (ord(character) % 7) / 4


@pytest.fixture
def server():
    with OpenAITestServer(MODEL, CharacterTokenSource(ScriptedScorer(cost)), ScriptedGenerator(lambda r, p: "A")) as running:
        yield running


def backend(server, cache):
    options = OpenAIOptions(backend="openai", api_base=server.api_base, path=MODEL, max_retries=RETRIES)
    return create_backend(options, cache, sleep=lambda s: None, backoff=Backoff(rng=random.Random(0)))


PROBE = "The answer is 台灣 yes"  # the capability check, asked by every run


def scoring_prompts(server, since: int = 0) -> list[str]:
    return [s.body["prompt"] for s in server.requests()[since:] if s.body.get("echo") and s.body["prompt"] != PROBE]


def spoil(server, prompt: str) -> None:
    """Every attempt at the request for exactly ``prompt`` gets a null log-probability."""
    server.inject("null-logprob", times=RETRIES + 1, when=json.dumps(prompt, ensure_ascii=False))


def first_prompt_with(server, text: str) -> str:
    return next(p for p in scoring_prompts(server) if text in p)


# -- TWBias ----------------------------------------------------------------------------------------

ATTRS = {"錢": Attribute("錢", 1, "Money", 2), "哭": Attribute("哭", 0, "Emotion", 3)}


def twbias_dataset() -> TWBiasDataset:
    def rows(file, texts, pairs):
        return tuple(
            BiasSentence(str(i), t, i % 2, (TargetAttribute(*pairs[i % len(pairs)]),), file, i + 2) for i, t in enumerate(texts)
        )

    groups = {"T1": TargetGroup("gender", "T1", ("男人", "男生")), "T2": TargetGroup("gender", "T2", ("女人", "女生"))}
    female = ["女人愛錢", "女生愛哭", "女人都很會哭啊", "那些女生只想要錢", "女生的錢不夠花"]
    male = ["男人愛車", "男生不能哭", "男人都不會哭", "這些男生只想要錢", "男生的錢都拿去花"]
    sets = {
        "T2": SentenceSet("gender", "T2", "female", "f.csv", rows("f.csv", female, [("女人", "錢"), ("女生", "哭")]), ATTRS, "fa.csv"),
        "T1": SentenceSet("gender", "T1", "male", "m.csv", rows("m.csv", male, [("男人", "錢"), ("男生", "哭")]), ATTRS, "ma.csv"),
    }
    axis = AxisData("gender", groups, ({"T1": "男人", "T2": "女人"}, {"T1": "男生", "T2": "女生"}), sets)
    return TWBiasDataset(axes={"gender": axis}, prompts={"0": "", "00": ""})


def run_twbias(server, tmp_path, store=None, resume=False):
    api = backend(server, tmp_path / "cache")
    return run_with_fakes(
        "twbias",
        options={"groups": "gender", "prompt_types": "0"},
        dataset=twbias_dataset(),
        report=False,
        store=store,
        resume=resume,
        scorer=api.scorer(),
    ).summary


def test_twbias_counts_an_invalid_score_and_leaves_its_row_out_of_the_test(server, tmp_path):
    healthy = run_twbias(server, tmp_path / "healthy")
    assert healthy.counts.invalid_replies == 0
    assert healthy.metrics.gender["female"].prompts["0"].n_invalid == 0
    spoil(server, "女人愛錢")
    spoiled = run_twbias(server, tmp_path / "spoiled")
    assert spoiled.counts.invalid_replies == 1
    female = spoiled.metrics.gender["female"].prompts["0"]
    assert female.n_invalid == 1 and female.n == healthy.metrics.gender["female"].prompts["0"].n - 1
    assert spoiled.metrics.gender["male"] == healthy.metrics.gender["male"]  # the other specification is untouched
    assert any("1 of" in note and "no valid reply" in note for note in spoiled.notes)


def test_twbias_an_invalid_score_survives_resume(server, tmp_path):
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    spoil(server, "女人愛錢")
    first = run_twbias(server, tmp_path, store=store)
    [manifest] = store.find_runs("twbias")
    payloads = list(store.load_results(manifest.run_id, "loglikelihood").values())
    [lost] = [p for p in payloads if p.get("invalid")]
    assert math.isnan(lost["logprob"]) and lost["n_tokens"] == 0
    assert all(set(p) == {"logprob", "n_tokens", "is_greedy", "provenance"} for p in payloads if p is not lost)  # the former shape
    store.mark_interrupted(manifest.run_id, "test: as if killed after scoring")
    sent = len(server.requests())
    resumed = run_twbias(server, tmp_path, store=store, resume=True)  # the server is healthy now
    assert scoring_prompts(server, sent) == []  # nothing asked again: the invalid score came from the store
    assert resumed.counts.invalid_replies == 1
    assert resumed.metrics.model_dump_json() == first.metrics.model_dump_json()
    assert resumed.counts == first.counts
    store.close()


# -- KoBBQ (likelihood mode) -----------------------------------------------------------------------

KOBBQ = {"mode": "likelihood", "limit": 2, "prompts": "1", "statistics": False}


def run_kobbq(server, tmp_path, data, store=None, resume=False):
    api = backend(server, tmp_path / "cache")
    return run_with_fakes(
        "kobbq", options=KOBBQ, data_path=data, report=False, store=store, resume=resume, scorer=api.scorer()
    ).summary


def test_kobbq_counts_a_question_with_an_invalid_letter_score_out_of_choice(server, tmp_path, kobbq_data):
    healthy = run_kobbq(server, tmp_path / "healthy", kobbq_data)
    assert healthy.counts.invalid_replies == 0 and healthy.counts.out_of_choice == 0
    spoil(server, scoring_prompts(server)[1])  # one letter of one question
    spoiled = run_kobbq(server, tmp_path / "spoiled", kobbq_data)
    counts = spoiled.counts
    assert counts.answers == healthy.counts.answers
    assert counts.invalid_replies == 1 and counts.out_of_choice == 1
    assert any("got no valid reply from the backend" in note for note in spoiled.notes)


def test_kobbq_an_invalid_letter_score_survives_resume(server, tmp_path, kobbq_data):
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    probe = run_kobbq(server, tmp_path / "probe", kobbq_data)  # which prompts the run asks
    assert probe.counts.invalid_replies == 0
    spoil(server, scoring_prompts(server)[1])
    first = run_kobbq(server, tmp_path / "run", kobbq_data, store=store)
    [manifest] = store.find_runs("kobbq")
    store.mark_interrupted(manifest.run_id, "test: as if killed after scoring")
    sent = len(server.requests())
    resumed = run_kobbq(server, tmp_path / "run", kobbq_data, store=store, resume=True)
    assert scoring_prompts(server, sent) == []
    assert resumed.counts.invalid_replies == 1 and resumed.counts == first.counts
    assert resumed.metrics.model_dump_json() == first.metrics.model_dump_json()
    store.close()


# -- McBE PC -------------------------------------------------------------------------------------

B1 = BEI("gender", "背景。", "[PLH]很能干。", ("甲", "乙"), "能力", "解释一", 6.0, "gender.xlsx", 2)
B2 = BEI("gender", "背景。", "[PLH]在做饭。", ("丙", "丁"), "家庭", "解释二", 3.0, "gender.xlsx", 3)


def run_mcbe(server, tmp_path):
    api = backend(server, tmp_path / "cache")
    return run_with_fakes(
        "mcbe", options={"tasks": "pc"}, dataset=McBEDataset((B1, B2)), report=False, scorer=api.scorer()
    ).summary


def test_mcbe_pc_counts_an_invalid_score_and_leaves_its_bei_out(server, tmp_path):
    healthy = run_mcbe(server, tmp_path / "healthy")
    assert "pc_invalid_replies" not in healthy.as_dict()["counts"]
    assert healthy.details.items["gender:2"].pc.score is not None
    spoil(server, first_prompt_with(server, "甲"))
    spoiled = run_mcbe(server, tmp_path / "spoiled")
    assert spoiled.counts.pc_invalid_replies == 1
    assert spoiled.metrics.categories["gender"].invalid.pc_invalid_replies == 1
    assert spoiled.details.items["gender:2"].pc.score is None and spoiled.details.items["gender:2"].pc.skipped
    # the category's PC is B2's alone
    assert spoiled.metrics.categories["gender"].pc == healthy.details.items["gender:3"].pc.score
    assert any("PC: 1 sentence score request(s) got no valid reply" in note for note in spoiled.notes)


# -- LIBRA ---------------------------------------------------------------------------------------

ROWS = [
    {"id": "a", "category": "gender", "group": "women", "sentence": "My sister cooked dinner.", "target": "sister",
     "anti_stereotype": "brother", "unrelated": "kettle"},
    {"id": "b", "category": "race", "group": "Māori", "sentence": "The whānau brought kai.", "target": "whānau",
     "anti_stereotype": "family", "unrelated": "moon"},
    {"id": "c", "category": "gender", "group": "men", "sentence": "My uncle fixed the car.", "target": "uncle",
     "anti_stereotype": "aunt", "unrelated": "spoon"},
]  # fmt: skip
GLOSSARY = (GlossaryEntry("whānau", "extended family group"), GlossaryEntry("kai", "food or a meal"))


class Lexicon:
    def describe(self):
        return "test lexicon"

    def known(self, forms):
        from culturebias.domain.libra.words import strip_diacritics

        return {f for f in forms if strip_diacritics(f) not in {"whanau", "kai"}}


def run_libra(server, tmp_path):
    api = backend(server, tmp_path / "cache")
    dataset = LibraDataset(tuple(triplet_from_fields(r, file="t", row=i) for i, r in enumerate(ROWS, 1)), GLOSSARY)
    return run_with_fakes(
        "libra",
        options=LibraOptions(embedder="bag-of-words"),
        dataset=dataset,
        report=False,
        store=MemoryResultStore(),
        scorer=api.scorer(),
        generator=api.generator(),
        lexicons=lambda spec, min_frequency=0.0: Lexicon(),
        embedders=lambda spec: BagOfWordsEmbedder(),
    ).summary


def test_libra_counts_an_invalid_score_and_leaves_its_triplet_out(server, tmp_path):
    healthy = run_libra(server, tmp_path / "healthy")
    assert "invalid_scores" not in healthy.as_dict()["counts"]
    valid_before = healthy.counts.valid_triplets
    spoil(server, first_prompt_with(server, "uncle fixed"))
    spoiled = run_libra(server, tmp_path / "spoiled")
    assert spoiled.counts.invalid_scores == 1
    assert spoiled.counts.valid_triplets == valid_before - 1
    assert spoiled.counts.invalid_triplets == healthy.counts.invalid_triplets + 1
    assert spoiled.counts.invalid_replies == healthy.counts.invalid_replies  # definitions: unchanged
    columns = spoiled.details.triplets
    c = columns.id.index("c")
    assert columns.valid[c] is False and healthy.details.triplets.valid[c] is True
    spoiled_scores = [columns.stereotyped[c], columns.anti_stereotyped[c], columns.unrelated[c]]
    assert 0.0 not in spoiled_scores and any(v is None or math.isnan(v) for v in spoiled_scores)
    assert any("1 scoring request(s) got no valid reply" in note for note in spoiled.notes)
