"""Protocols count invalid replies: LIBRA's definitions through the openai backend on a loopback server,
stored and resumed, and ``protocol.mode=auto`` deciding from capabilities only.

Faults are aimed at one request by the text it holds; nothing depends on request order or timing.
"""

from __future__ import annotations

import random

import pytest

from culturebias.adapters.libra.files import triplet_from_fields
from culturebias.adapters.similarity.embeddings import BagOfWordsEmbedder
from culturebias.adapters.openai.backend import create_backend
from culturebias.adapters.openai.client import ServerUnavailableError
from culturebias.adapters.openai.retry_policy import Backoff
from culturebias.adapters.openai.options import OpenAIOptions
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
from culturebias.adapters.stores.memory_store import MemoryResultStore
from culturebias.application.bbq.answering import resolve_mode
from culturebias.domain.errors import CapabilityError
from culturebias.domain.libra.options import LibraOptions
from culturebias.domain.libra.triplets import GlossaryEntry, LibraDataset
from culturebias.testing.context import fake_context, run_with_fakes
from culturebias.testing.openai_server import CharacterTokenSource, OpenAITestServer

MODEL = "served-model"
RETRIES = 1

ROWS = [
    {"id": "a", "category": "gender", "group": "women", "sentence": "My sister cooked dinner.", "target": "sister",
     "anti_stereotype": "brother", "unrelated": "kettle"},
    {"id": "b", "category": "race", "group": "Māori", "sentence": "The whānau brought kai.", "target": "whānau",
     "anti_stereotype": "family", "unrelated": "moon"},
]  # fmt: skip
GLOSSARY = (GlossaryEntry("whānau", "extended family group"), GlossaryEntry("kai", "food or a meal"))
LOCAL = {"whanau", "kai"}


class Lexicon:
    def describe(self):
        return "test lexicon"

    def known(self, forms):
        from culturebias.domain.libra.words import strip_diacritics

        return {f for f in forms if strip_diacritics(f) not in LOCAL}


def definition(request, prompt: str) -> str:
    if request.messages and request.messages[-1].content.startswith("define "):
        return request.messages[-1].content
    return "an extended family group" if '"whānau"' in prompt else "food or a meal"


@pytest.fixture
def server():
    scorer = ScriptedScorer(lambda context, char: -0.5)
    with OpenAITestServer(MODEL, CharacterTokenSource(scorer), ScriptedGenerator(definition)) as running:
        yield running


def backend(server, tmp_path):
    options = OpenAIOptions(backend="openai", api_base=server.api_base, path=MODEL, max_retries=RETRIES)
    return create_backend(options, tmp_path / "cache", sleep=lambda s: None, backoff=Backoff(rng=random.Random(0)))


def run_libra(server, tmp_path, store):
    api = backend(server, tmp_path)
    dataset = LibraDataset(tuple(triplet_from_fields(r, file="t", row=i) for i, r in enumerate(ROWS, 1)), GLOSSARY)
    return run_with_fakes(
        "libra",
        options=LibraOptions(embedder="bag-of-words"),
        dataset=dataset,
        store=store,
        scorer=api.scorer(),
        generator=api.generator(),
        lexicons=lambda spec, min_frequency=0.0: Lexicon(),
        embedders=lambda spec: BagOfWordsEmbedder(),
    ).summary


def test_a_definition_without_text_is_counted_invalid_never_scored_zero(server, tmp_path):
    server.inject("null-content", times=RETRIES + 1, when='\\"kai\\"')
    summary = run_libra(server, tmp_path, MemoryResultStore())
    words = {w.term: w for w in summary.details.local_words}
    assert summary.counts.invalid_replies == 1
    assert words["kai"].score is None and words["kai"].understood is False
    assert words["whānau"].score is not None and words["whānau"].understood is True
    assert any("no valid reply to 1 definition request" in note for note in summary.notes)
    # a healthy run counts none
    healthy = run_libra(server, tmp_path / "again", MemoryResultStore())
    assert healthy.counts.invalid_replies == 0
    assert {w.term: w.understood for w in healthy.details.local_words} == {"whānau": True, "kai": True}
    assert "invalid_replies" in healthy.as_dict()["counts"]


def test_an_invalid_reply_is_stored_as_invalid_so_a_resumed_run_counts_it_again(server, tmp_path):
    from culturebias.domain.requests import ChatMessage, GenerationRequest, GenerationResult

    server.inject("null-content", times=RETRIES + 1, when="define kai")
    store = MemoryResultStore()
    requests = [GenerationRequest.chat([ChatMessage("user", f"define {w}")]) for w in ("kai", "whānau")]

    def generate():
        ctx = fake_context(generator=backend(server, tmp_path).generator(), store=store, run_id="run-1")
        return ctx.generator().generate(requests)

    assert generate() == [GenerationResult("", invalid=True), GenerationResult("define whānau")]
    payloads = list(store.load_results("run-1", "generation").values())
    assert sorted(p.get("invalid", False) for p in payloads) == [False, True]
    assert all(set(p) == {"text", "model"} for p in payloads if not p.get("invalid"))  # the former shape
    sent = len(server.requests())
    assert generate() == [GenerationResult("", invalid=True), GenerationResult("define whānau")]  # as --resume sees it
    assert len(server.requests()) == sent


class ProbeFails:
    """A scorer whose capability check fails the way the probe does."""

    def __init__(self, error: Exception):
        self.error = error
        self.identity = ScriptedGenerator(lambda r, p: "").identity

    def check_loglikelihood(self):
        raise self.error


def test_auto_mode_switches_to_generation_only_for_a_missing_capability():
    generator = ScriptedGenerator(lambda r, p: "A")
    missing = fake_context(scorer=ProbeFails(CapabilityError("openai", "prompt log-probabilities")), generator=generator)
    assert resolve_mode(missing, "auto") == "generate"
    outage = fake_context(scorer=ProbeFails(ServerUnavailableError("giving up after 6 attempts: HTTP 503")), generator=generator)
    with pytest.raises(ServerUnavailableError):
        resolve_mode(outage, "auto")
