"""Prompt log-probabilities cut short with consistent lengths, on every boundary source, for scoring and the probe.

The loopback server's ``short-logprobs`` fault answers as a server that computed
only the prompt's first tokens would: every token list, the offsets,
``usage.prompt_tokens`` and the echoed text agree with each other, so no list
is shorter than another. A reply like that must be asked again, then counted
invalid; never scored, never cached. Before the fix it was scored under
``context-echo`` (a continuation of 0 tokens scored 0.0, or the context's tail
scored as continuation) and, cut by one token, under ``tokenize``; one such
reply to the truth probe switched a whole ``auto`` run to ``context-echo``.

Faults are aimed at one request by its exact prompt (``prompt=``), so nothing
depends on the order in which concurrent requests arrive; nothing sleeps.
"""

from __future__ import annotations

import functools
import math
import random
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("torch")

from culturebias.adapters.hf.backend import create_backend as hf_backend  # noqa: E402
from culturebias.adapters.hf.options import HFOptions  # noqa: E402
from culturebias.adapters.openai.backend import create_backend  # noqa: E402
from culturebias.adapters.openai.retry_policy import Backoff  # noqa: E402
from culturebias.adapters.openai.options import OpenAIOptions  # noqa: E402
from culturebias.adapters.openai.truth_probe import COUNTING, PROBE_TEXTS, TruthProbeError  # noqa: E402
from culturebias.domain.requests import LoglikelihoodRequest  # noqa: E402
from culturebias.testing.openai_server import HFTokenSource, OpenAITestServer  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402

MODEL = "tiny-gpt2"
RETRIES = 2  # three attempts per request
HF_CACHE = Path(tempfile.mkdtemp(prefix="culturebias-short-hf-"))
REQUESTS = [
    LoglikelihoodRequest("", "男生收入高才會有話語權"),
    LoglikelihoodRequest("問題：", "我覺得老婆比較會修電腦"),
    LoglikelihoodRequest("정답: ", "그 사람은 의사입니다."),
    LoglikelihoodRequest("The answer is", " A"),
    LoglikelihoodRequest("The answer is", " B"),
]
TARGET = REQUESTS[2].context + REQUESTS[2].continuation
SOURCES = ["tokenize", "offsets", "context-echo"]
PROVENANCE = {"tokenize": "tokenize:/extras/tokenize", "offsets": "offsets", "context-echo": "context-echo"}
KOREAN = next(t for t in PROBE_TEXTS if t.name == "Korean sentence")


@functools.lru_cache(maxsize=None)
def tiny():
    path = str(cached_tiny_causal_lm(arch="gpt2"))
    return HFTokenSource(path), hf_backend(HFOptions(backend="hf", path=path, device="cpu", batch_size=8), HF_CACHE)


@pytest.fixture
def server():
    source, local = tiny()
    with OpenAITestServer(MODEL, source, local.generator()) as running:
        yield running


def backend(server, folder: Path, source: str = "auto"):
    options = OpenAIOptions(
        backend="openai", api_base=server.api_base, path=MODEL, boundary_source=source, max_retries=RETRIES,
        max_concurrency=2, timeout_s=120.0,
    )
    return create_backend(options, folder / "cache", sleep=lambda s: None, backoff=Backoff(rng=random.Random(0)))


def scores(results) -> list[tuple[float, int]]:
    return [(r.logprob, r.n_tokens) for r in results]


def attempts(server, prompt: str, since: int = 0) -> list[str | None]:
    return [s.fault for s in server.requests()[since:] if s.body.get("prompt") == prompt]


# -- scoring -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("short_by", [None, 1], ids=["half", "last-token"])
@pytest.mark.parametrize("source", SOURCES)
def test_a_reply_cut_short_is_asked_again_and_scores_as_a_whole_one(server, tmp_path, source, short_by):
    healthy = backend(server, tmp_path / "healthy", source).scorer()
    want = scores(healthy.loglikelihood(REQUESTS))
    assert healthy.provenance.boundary_source == PROVENANCE[source]
    since = len(server.requests())
    server.inject("short-logprobs", times=RETRIES, prompt=TARGET, short_by=short_by)
    assert scores(backend(server, tmp_path / "faulty", source).scorer().loglikelihood(REQUESTS)) == want
    assert attempts(server, TARGET, since) == ["short-logprobs"] * RETRIES + [None]


@pytest.mark.parametrize("short_by", [None, 1], ids=["half", "last-token"])
@pytest.mark.parametrize("source", SOURCES)
def test_a_reply_that_stays_cut_short_is_invalid_never_scored_nor_cached(server, tmp_path, source, short_by):
    want = scores(backend(server, tmp_path / "healthy", source).scorer().loglikelihood(REQUESTS))
    server.inject("short-logprobs", times=RETRIES + 1, prompt=TARGET, short_by=short_by)
    faulty = backend(server, tmp_path / "faulty", source)
    got = faulty.scorer().loglikelihood(REQUESTS)
    lost = got[2]
    assert lost.invalid and math.isnan(lost.logprob) and lost.n_tokens == 0
    assert scores(got[:2] + got[3:]) == want[:2] + want[3:]
    since = len(server.requests())  # the server is healthy again: only the invalid one is asked, from the same cache
    assert scores(backend(server, tmp_path / "faulty", source).scorer().loglikelihood(REQUESTS)) == want
    assert [s.body["prompt"] for s in server.requests()[since:] if s.body.get("echo")] == [TARGET]


@pytest.mark.parametrize("short_by", [None, 1], ids=["half", "last-token"])
def test_a_context_echo_cut_short_is_asked_again_then_its_requests_counted_invalid(server, tmp_path, short_by):
    context = REQUESTS[1].context  # "問題：", echoed alone
    want = scores(backend(server, tmp_path / "healthy", "context-echo").scorer().loglikelihood(REQUESTS))
    server.inject("short-logprobs", times=RETRIES, prompt=context, short_by=short_by)
    assert scores(backend(server, tmp_path / "retried", "context-echo").scorer().loglikelihood(REQUESTS)) == want
    server.inject("short-logprobs", times=RETRIES + 1, prompt=context, short_by=short_by)
    got = backend(server, tmp_path / "lost", "context-echo").scorer().loglikelihood(REQUESTS)
    assert [r.invalid for r in got] == [False, True, False, False, False]
    assert scores(got[:1] + got[2:]) == want[:1] + want[2:]


# -- the truth probe ---------------------------------------------------------------------------------


@pytest.mark.parametrize("short_by", [None, 1], ids=["half", "last-token"])
@pytest.mark.parametrize("text", [COUNTING, KOREAN], ids=["ascii", "korean"])
@pytest.mark.parametrize("routes, chosen", [(True, "tokenize:/extras/tokenize"), (False, "offsets")])
def test_one_short_reply_to_the_probe_changes_no_boundary_source(server, tmp_path, text, short_by, routes, chosen):
    server.state.tokenize_routes = routes
    server.inject("short-logprobs", prompt=text.text, short_by=short_by, probe=True)
    scorer = backend(server, tmp_path).scorer()
    scorer.check_loglikelihood()
    assert server.pending_faults() == 0, "the fault reached the probe"
    assert scorer.provenance.boundary_source == chosen
    reason = scorer.probe_findings["boundary reason"]
    assert (chosen.startswith("tokenize") and "tokenize route" in reason) or (
        "no tokenize route" in reason and "offsets add up" in reason
    ), reason


@pytest.mark.parametrize("source", SOURCES)
def test_a_probe_asked_with_an_explicit_source_rides_out_a_short_reply(server, tmp_path, source):
    server.inject("short-logprobs", prompt=KOREAN.text, probe=True)
    if source == "context-echo":  # its contexts are echoed alone too
        server.inject("short-logprobs", prompt=KOREAN.context, short_by=1, probe=True)
    scorer = backend(server, tmp_path, source).scorer()
    scorer.check_loglikelihood()
    assert server.pending_faults() == 0
    assert scorer.provenance.boundary_source == PROVENANCE[source]


def test_a_probe_text_always_answered_short_refuses_the_server_and_never_downgrades_silently(server, tmp_path):
    server.inject("short-logprobs", times=50, prompt=KOREAN.text, short_by=1, probe=True)
    with pytest.raises(TruthProbeError) as refused:
        backend(server, tmp_path).scorer().check_loglikelihood()
    assert "Korean sentence" in str(refused.value) and server.api_base in str(refused.value)
    asked = [s for s in server.requests(probe=True) if s.body.get("prompt") == KOREAN.text]
    assert len(asked) >= 3, "asked again before giving a source up"


def test_the_reason_for_a_source_names_the_reply_asked_again(server, tmp_path):
    server.state.tokenize_routes = False
    server.inject("short-logprobs", prompt=KOREAN.text, probe=True)
    scorer = backend(server, tmp_path).scorer()
    scorer.check_loglikelihood()
    reason = scorer.probe_findings["boundary reason"]
    assert "asked again before deciding: the Korean sentence" in reason and "cut short" in reason


# -- whole runs: one reply in five cut short ------------------------------------------------------------

KOBBQ = {"mode": "likelihood", "limit": 3, "prompts": "1", "statistics": False}


@pytest.fixture
def char_server():
    """Every character a token, scored by a rule: whole runs in seconds."""
    from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
    from culturebias.testing.openai_server import CharacterTokenSource

    scorer = ScriptedScorer(lambda context, char: -0.5 - (ord(char) + len(context)) % 7 / 4)
    with OpenAITestServer(MODEL, CharacterTokenSource(scorer), ScriptedGenerator(lambda r, p: "A")) as running:
        yield running


def twbias_dataset():
    from culturebias.domain.twbias.model import (
        Attribute, AxisData, BiasSentence, SentenceSet, TargetAttribute, TargetGroup, TWBiasDataset,
    )

    attributes = {"錢": Attribute("錢", 1, "Money", 2), "哭": Attribute("哭", 0, "Emotion", 3)}

    def rows(file, texts, pairs):
        return tuple(
            BiasSentence(str(i), t, i % 2, (TargetAttribute(*pairs[i % 2]),), file, i + 2) for i, t in enumerate(texts)
        )

    female = ["女人愛錢", "女生愛哭", "女人都很會哭啊", "那些女生只想要錢", "女生的錢不夠花", "女人哭了就有錢"]
    male = ["男人愛車", "男生不能哭", "男人都不會哭", "這些男生只想要錢", "男生的錢都拿去花", "男人有錢就不哭"]
    sets = {
        "T2": SentenceSet("gender", "T2", "female", "f.csv", rows("f.csv", female, [("女人", "錢"), ("女生", "哭")]), attributes, "fa.csv"),
        "T1": SentenceSet("gender", "T1", "male", "m.csv", rows("m.csv", male, [("男人", "錢"), ("男生", "哭")]), attributes, "ma.csv"),
    }
    groups = {"T1": TargetGroup("gender", "T1", ("男人", "男生")), "T2": TargetGroup("gender", "T2", ("女人", "女生"))}
    axis = AxisData("gender", groups, ({"T1": "男人", "T2": "女人"}, {"T1": "男生", "T2": "女生"}), sets)
    return TWBiasDataset(axes={"gender": axis}, prompts={"0": "", "00": ""})


def run(benchmark: str, server, folder: Path, source: str, retries: int = RETRIES):
    from culturebias.adapters.stores.memory_store import MemoryResultStore
    from culturebias.testing.context import run_with_fakes

    options = OpenAIOptions(
        backend="openai", api_base=server.api_base, path=MODEL, boundary_source=source, max_retries=retries,
        max_concurrency=1, timeout_s=120.0,  # one at a time: a retry follows the reply it replaces
    )
    scorer = create_backend(options, folder / "cache", sleep=lambda s: None, backoff=Backoff(rng=random.Random(0))).scorer()
    store = MemoryResultStore()
    if benchmark == "kobbq":
        result = run_with_fakes("kobbq", options=KOBBQ, report=False, store=store, scorer=scorer)
    else:
        options = {"groups": "gender", "prompt_types": "0"}
        result = run_with_fakes("twbias", options=options, dataset=twbias_dataset(), report=False, store=store, scorer=scorer)
    [manifest] = store.find_runs()
    return result.summary, store.load_results(manifest.run_id, "loglikelihood")


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("benchmark", ["kobbq", "twbias"])
def test_a_run_with_one_reply_in_five_cut_short_equals_the_fault_free_run_or_counts_them_invalid(
    char_server, tmp_path, benchmark, source
):
    server = char_server
    healthy, healthy_scores = run(benchmark, server, tmp_path / "healthy", source)
    assert healthy.counts.invalid_replies == 0 and healthy_scores
    probe = healthy.model.scorer_probe  # the run's provenance says how boundaries were placed, and why
    assert probe["boundary"] == PROVENANCE[source] and probe["boundary reason"]
    server.inject_every("short-logprobs", 5, endpoint="completions")
    retried, retried_scores = run(benchmark, server, tmp_path / "retried", source)
    spoiled = len([s for s in server.requests() if s.fault == "short-logprobs"])
    assert spoiled >= 3, "the fault reached the run"
    assert retried.counts.invalid_replies == 0
    assert retried.metrics.model_dump_json() == healthy.metrics.model_dump_json()
    assert retried_scores == healthy_scores

    server.clear_every()
    server.inject_every("short-logprobs", 5, endpoint="completions")
    lost, lost_scores = run(benchmark, server, tmp_path / "lost", source, retries=0)  # no second attempt
    invalid = {key for key, payload in lost_scores.items() if payload.get("invalid")}
    assert invalid and lost.counts.invalid_replies > 0
    assert {k: v for k, v in lost_scores.items() if k not in invalid} == {k: healthy_scores[k] for k in lost_scores if k not in invalid}
