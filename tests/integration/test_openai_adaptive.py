"""Adaptive concurrency against a one-slot server, and a run that gives up keeping what it got (real HTTP on 127.0.0.1).

The one-slot server turns away (leaves hanging until it stops) any request that
arrives while its slot is busy, so the client sees a timeout on any machine. A
``gate`` fault keeps the first request served in the slot until a second has
arrived, so the overlap that a real one-slot server would suffer is certain,
not a matter of timing. The client's timeouts are short (1.5 s) but far above
what one unobstructed request takes (milliseconds); its sleeps are skipped.
"""

from __future__ import annotations

import random

import pytest
from structlog.testing import capture_logs

from culturebias.adapters.openai.backend import create_backend
from culturebias.adapters.openai.client import ServerUnavailableError
from culturebias.adapters.openai.retry_policy import Backoff
from culturebias.adapters.openai.options import OpenAIOptions
from culturebias.adapters.progress.reporters import NullProgress
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.application.recorded_ports import RecordedGenerator
from culturebias.domain.requests import ChatMessage, GenerationRequest
from culturebias.testing.openai_server import CharacterTokenSource, OpenAITestServer

MODEL = "char-test-model"
PROMPTS = [f"prompt {i}" for i in range(12)]


def reply_rule(request: GenerationRequest, prompt: str) -> str:
    return f"said:{request.messages[-1].content}" if request.messages is not None else f"plain:{prompt}"


def serve(slots: int | None = None) -> OpenAITestServer:
    return OpenAITestServer(MODEL, CharacterTokenSource(ScriptedScorer(lambda c, x: -1.0)), ScriptedGenerator(reply_rule), slots=slots)


def make_backend(server, tmp_path, **overrides):
    options = {
        "backend": "openai",
        "api_base": server.api_base,
        "path": MODEL,
        "max_concurrency": 8,
        "timeout_s": 1.5,
        "timeout_s_per_1k_chars": 0.0,
        "cache": "off",
    }
    options.update(overrides)
    return create_backend(OpenAIOptions(**options), tmp_path / "cache", sleep=lambda s: None, backoff=Backoff(rng=random.Random(0)))


def test_a_one_slot_server_is_served_completely_once_the_client_backs_off_to_one(tmp_path):
    with serve(slots=1) as server, capture_logs() as logs:
        server.inject("gate", together=2)  # the first request served holds the slot until a second has come
        # a request is turned away only after a raise (each needs 4 successes): 1 + 12/4 timeouts in all, at most
        backend = make_backend(server, tmp_path, max_retries=8)
        requests = [GenerationRequest(prompt=p) for p in PROMPTS[:6]]
        requests += [GenerationRequest.chat((ChatMessage("user", p),)) for p in PROMPTS[6:]]
        results = backend.generator().generate(requests)
        assert [r.text for r in results] == [f"plain:{p}" for p in PROMPTS[:6]] + [f"said:{p}" for p in PROMPTS[6:]]
        assert not any(r.invalid for r in results)
        assert backend.client.concurrency.lowest == 1  # started at model.initial_concurrency=2
        assert server.state.peak_serving == 1
        assert "slot-busy" in {s.fault for s in server.requests()}  # a request did find the slot busy
    lowered = [e for e in logs if e["event"] == "concurrency lowered"]
    assert lowered and lowered[0]["limit"] == 1 and lowered[0]["reason"].startswith("timed out")


def test_without_adaptation_a_one_slot_server_makes_requests_give_up_with_the_settings_named(tmp_path):
    with serve(slots=1) as server:
        # all eight arrive at once: the first holds the slot until the other seven came and were turned away;
        # their retries arrive together again (the seven still hanging are in flight too: 7 + 7)
        server.inject("gate", together=8)
        server.inject("gate", together=14)
        backend = make_backend(server, tmp_path, initial_concurrency=8, adaptive_concurrency=False, max_retries=1)
        with pytest.raises(ServerUnavailableError) as caught:
            backend.generator().generate([GenerationRequest(prompt=p) for p in PROMPTS[:8]])
        message = str(caught.value)
        assert "giving up after 2 attempts: timed out after 1.5 s" in message
        assert server.api_base in message and "of 8, prompt 'prompt " in message  # the server and the request
        for named in (
            "lower model.max_concurrency (now 8)",
            "model.initial_concurrency (now 8)",
            "raise model.timeout_s (now 1.5 s)",
            "model.max_retries (now 1)",
            "adaptation off",
        ):
            assert named in message
        assert backend.client.concurrency.limit == 8


def test_a_run_that_gives_up_keeps_the_replies_that_arrived_and_a_second_run_asks_only_the_rest(tmp_path):
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    requests = [GenerationRequest(prompt=p) for p in PROMPTS]
    with serve() as server:
        server.inject("503", times=1000, when="prompt 6")  # this request never gets an answer
        first = make_backend(server, tmp_path, initial_concurrency=3, max_concurrency=3, max_retries=2)
        with pytest.raises(ServerUnavailableError, match=r"giving up after 3 attempts: HTTP 503 \(request 7 of 12, prompt 'prompt 6'"):
            RecordedGenerator(first.generator(), store, "run", NullProgress(), chunk_size=100).generate(requests)
        answered = {s.body["prompt"] for s in server.requests() if s.fault is None}
        # three workers take the requests in order: six were asked before "prompt 6", at least four answered
        assert len(answered) >= 4 and "prompt 6" not in answered
        stored = {payload["text"] for payload in store.load_results("run", "generation").values()}
        assert stored == {f"plain:{p}" for p in answered}

        with server.state.lock:
            server.state.faults.clear()  # the server recovers
        asked_before = len(server.requests())
        second = make_backend(server, tmp_path, initial_concurrency=3, max_concurrency=3)
        results = RecordedGenerator(second.generator(), store, "run", NullProgress(), chunk_size=100).generate(requests)
        assert [r.text for r in results] == [f"plain:{p}" for p in PROMPTS]
        asked_again = sorted(s.body["prompt"] for s in server.requests()[asked_before:])
        assert asked_again == sorted(set(PROMPTS) - answered)
    store.close()


def test_a_scoring_run_that_gives_up_keeps_the_scores_that_arrived_and_a_second_run_asks_only_the_rest(tmp_path):
    from culturebias.application.recorded_ports import RecordedScorer
    from culturebias.domain.requests import LoglikelihoodRequest

    store = SQLiteResultStore(tmp_path / "results.sqlite")
    requests = [LoglikelihoodRequest("ab", f" {p}") for p in PROMPTS]
    with serve() as server:
        server.inject("503", times=1000, when="prompt 6", endpoint="completions")  # never answered
        first = make_backend(server, tmp_path, initial_concurrency=3, max_concurrency=3, max_retries=2)
        with pytest.raises(ServerUnavailableError, match="giving up after 3 attempts: HTTP 503"):
            RecordedScorer(first.scorer(), store, "run", NullProgress(), chunk_size=100).loglikelihood(requests)
        answered = {s.body["prompt"] for s in server.requests("completions") if s.fault is None}
        assert len(answered) >= 4 and "ab prompt 6" not in answered
        stored = store.load_results("run", "loglikelihood")
        assert len(stored) == len(answered)  # every score that arrived, nothing else
        assert all(payload["provenance"]["boundary_source"] == "tokenize:/extras/tokenize" for payload in stored.values())

        with server.state.lock:
            server.state.faults.clear()  # the server recovers
        asked_before = len(server.requests("completions"))
        second = make_backend(server, tmp_path, initial_concurrency=3, max_concurrency=3)
        results = RecordedScorer(second.scorer(), store, "run", NullProgress(), chunk_size=100).loglikelihood(requests)
        assert [r.n_tokens for r in results] == [len(p) + 1 for p in PROMPTS]  # a space and the prompt's characters
        asked_again = sorted(s.body["prompt"] for s in server.requests("completions")[asked_before:])
        assert asked_again == sorted({"ab " + p for p in PROMPTS} - answered)
    store.close()
