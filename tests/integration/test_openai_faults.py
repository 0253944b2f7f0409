"""Invalid replies and a validated cache, against a real HTTP server on 127.0.0.1.

Every fault is aimed at the request it spoils (``when=`` the prompt or message
it holds) or sent to a single request, so no assertion depends on the order in
which concurrent requests reach the server, and nothing waits on a clock: the
client's sleeps are recorded, not slept.

The character-level test model: the character at position i costs -1.0 when i
is even and -1.5 when i is odd.
"""

from __future__ import annotations

import json
import math
import random
import sqlite3

import pytest

from culturebias.adapters.openai.backend import create_backend
from culturebias.adapters.openai.client import ApiError, InvalidReplyError, ServerUnavailableError
from culturebias.adapters.openai.retry_policy import Backoff
from culturebias.adapters.openai.echo_logprobs import check_echo
from culturebias.adapters.openai.options import OpenAIOptions
from culturebias.adapters.openai.request_cache import RequestCacheError
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
from culturebias.domain.errors import CapabilityError
from culturebias.domain.requests import ChatMessage, GenerationRequest, GenerationResult, LoglikelihoodRequest
from culturebias.testing.openai_server import CharacterTokenSource, OpenAITestServer

MODEL = "char-test-model"
RETRIES = 2  # three attempts per request


def char_cost(context: str, character: str) -> float:
    return -1.0 if len(context) % 2 == 0 else -1.5


def reply_rule(request: GenerationRequest, prompt: str) -> str:
    return f"said:{request.messages[-1].content}" if request.messages is not None else f"plain:{prompt}"


@pytest.fixture
def server():
    with OpenAITestServer(MODEL, CharacterTokenSource(ScriptedScorer(char_cost)), ScriptedGenerator(reply_rule)) as running:
        yield running


def make_backend(server, tmp_path, **overrides):
    options = {"backend": "openai", "api_base": server.api_base, "path": MODEL, "max_retries": RETRIES, "timeout_s": 30.0}
    options.update(overrides)
    return create_backend(
        OpenAIOptions(**options), tmp_path / "cache", sleep=lambda s: None, backoff=Backoff(rng=random.Random(0))
    )


REQUESTS = [LoglikelihoodRequest("ab", "cd"), LoglikelihoodRequest("", "abc"), LoglikelihoodRequest("xyz", "w")]
EXPECTED = [(-2.5, 2), (-2.5, 2), (-1.5, 1)]


def scored(backend, requests=REQUESTS):
    return [(r.logprob, r.n_tokens) for r in backend.scorer().loglikelihood(requests)]


def cached_replies(tmp_path) -> dict[str, dict]:
    with sqlite3.connect(tmp_path / "cache" / "openai" / "requests.sqlite") as db:
        # the scoring replies (the server's token ids are cached beside them)
        return {key: json.loads(reply) for key, reply in db.execute("SELECT key, reply FROM replies WHERE endpoint = 'completions'")}


def every_cached_scoring_reply_is_valid(tmp_path) -> bool:
    replies = cached_replies(tmp_path)
    for reply in replies.values():
        check_echo({"prompt": reply["choices"][0]["text"][:-1]}, reply)  # the text ends with the generated token
    return True


# -- invalid scoring replies ---------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["truncated-logprobs", "null-logprob", "nan-logprob", "no-logprobs"])
def test_an_invalid_logprob_reply_is_retried_and_never_cached(server, tmp_path, fault):
    server.inject(fault, times=RETRIES, when='"xyzw"')  # every attempt but the last
    backend = make_backend(server, tmp_path)
    assert scored(backend) == EXPECTED
    spoiled = [s for s in server.requests() if s.fault]
    assert len(spoiled) == RETRIES and all(s.body["prompt"] == "xyzw" for s in spoiled)
    assert len(cached_replies(tmp_path)) == 3 and every_cached_scoring_reply_is_valid(tmp_path)


def test_a_reply_that_stays_invalid_is_an_invalid_score_never_zero_and_poisons_nothing(server, tmp_path):
    server.inject("null-logprob", times=RETRIES + 1, when='"xyzw"')
    results = make_backend(server, tmp_path).scorer().loglikelihood(REQUESTS)
    assert [(r.logprob, r.n_tokens, r.invalid) for r in results[:2]] == [(-2.5, 2, False), (-2.5, 2, False)]
    lost = results[2]
    assert lost.invalid and math.isnan(lost.logprob) and lost.n_tokens == 0 and not lost.is_greedy
    assert len([s for s in server.requests() if s.body["prompt"] == "xyzw"]) == RETRIES + 1
    # the two valid replies are cached, the invalid one is not ...
    assert len(cached_replies(tmp_path)) == 2 and every_cached_scoring_reply_is_valid(tmp_path)
    # ... so a re-run against the healthy server asks only that one again and scores it
    before = len(server.requests())
    assert scored(make_backend(server, tmp_path)) == EXPECTED
    assert [s.body["prompt"] for s in server.requests()[before:]] == ["xyzw"]


def test_an_unreachable_server_still_stops_scoring(server, tmp_path):
    server.inject("503", times=RETRIES + 1, when='"xyzw"')
    with pytest.raises(ServerUnavailableError):
        scored(make_backend(server, tmp_path))


def test_an_invalid_cached_reply_is_dropped_and_asked_again(server, tmp_path):
    backend = make_backend(server, tmp_path)
    assert scored(backend) == EXPECTED
    # poison the cache as an older culturebias could have: logprobs cut short inside the scored text
    with sqlite3.connect(tmp_path / "cache" / "openai" / "requests.sqlite") as db:
        for key, text in db.execute("SELECT key, reply FROM replies WHERE endpoint = 'completions'").fetchall():
            reply = json.loads(text)
            if reply["choices"][0]["text"].startswith("abcd"):
                block = reply["choices"][0]["logprobs"]
                block["token_logprobs"][3] = None
                db.execute("UPDATE replies SET reply = ? WHERE key = ?", (json.dumps(reply), key))
            if reply["choices"][0]["text"].startswith("xyzw"):
                db.execute("UPDATE replies SET reply = ? WHERE key = ?", ("{not json", key))
    before = len(server.requests())
    again = make_backend(server, tmp_path)
    assert scored(again) == EXPECTED
    assert sorted(s.body["prompt"] for s in server.requests()[before:]) == ["abcd", "xyzw"]
    assert again.client.dropped_from_cache == 2
    assert every_cached_scoring_reply_is_valid(tmp_path)


def test_an_invalid_score_after_a_dropped_cache_entry_is_counted_and_the_cache_left_empty(server, tmp_path):
    assert scored(make_backend(server, tmp_path), REQUESTS[:1]) == EXPECTED[:1]
    with sqlite3.connect(tmp_path / "cache" / "openai" / "requests.sqlite") as db:
        [(key, text)] = db.execute("SELECT key, reply FROM replies WHERE endpoint = 'completions'").fetchall()
        reply = json.loads(text)
        reply["choices"][0]["logprobs"]["token_logprobs"][2] = float("nan")
        db.execute("UPDATE replies SET reply = ? WHERE key = ?", (json.dumps(reply), key))
    server.inject("truncated-logprobs", times=RETRIES + 1)
    again = make_backend(server, tmp_path)
    [result] = again.scorer().loglikelihood(REQUESTS[:1])
    assert result.invalid and math.isnan(result.logprob)
    assert again.client.dropped_from_cache == 1
    assert cached_replies(tmp_path) == {}


def test_an_unreadable_cache_file_is_a_clear_error_and_cache_off_runs_without_it(server, tmp_path):
    broken = tmp_path / "cache" / "openai" / "requests.sqlite"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"this is not a database file" * 100)
    with pytest.raises(RequestCacheError, match="requests.sqlite cannot be used.*model.cache=off"):
        scored(make_backend(server, tmp_path))
    assert scored(make_backend(server, tmp_path, cache="off")) == EXPECTED


def test_cache_off_writes_nothing_and_refresh_asks_again_and_replaces(server, tmp_path):
    off = make_backend(server, tmp_path, cache="off")
    assert scored(off) == EXPECTED and scored(off) == EXPECTED
    assert len(server.requests()) == 6
    assert not (tmp_path / "cache" / "openai" / "requests.sqlite").exists()

    assert scored(make_backend(server, tmp_path)) == EXPECTED  # fills the cache
    first = cached_replies(tmp_path)
    before = len(server.requests())
    assert scored(make_backend(server, tmp_path)) == EXPECTED  # served from it
    assert len(server.requests()) == before
    assert scored(make_backend(server, tmp_path, cache="refresh")) == EXPECTED
    assert len(server.requests()) == before + 3
    replaced = cached_replies(tmp_path)
    assert set(replaced) == set(first) and replaced != first  # new replies (the server numbers its ids)


# -- invalid generation replies ------------------------------------------------------------------


def test_chat_content_null_is_retried_not_taken_as_an_empty_answer(server, tmp_path):
    server.inject("null-content", times=RETRIES, when='"define kai"')
    requests = [GenerationRequest.chat([ChatMessage("user", text)]) for text in ("define kai", "define whanau")]
    results = make_backend(server, tmp_path).generator().generate(requests)
    assert results == [GenerationResult("said:define kai"), GenerationResult("said:define whanau")]


@pytest.mark.parametrize(("fault", "request_"), [
    ("null-content", GenerationRequest.chat([ChatMessage("user", "define kai")])),
    ("null-text", GenerationRequest(prompt="define kai")),
])  # fmt: skip
def test_a_reply_without_text_after_every_retry_is_an_invalid_result_and_never_cached(server, tmp_path, fault, request_):
    server.inject(fault, times=RETRIES + 1, when="define kai")
    other = GenerationRequest(prompt="fine")
    backend = make_backend(server, tmp_path)
    results = backend.generator().generate([request_, other])
    assert results == [GenerationResult("", invalid=True), GenerationResult("plain:fine")]
    assert len(cached_replies(tmp_path)) == 1  # the valid reply only
    # the next run asks again (and, the server healthy now, gets text)
    assert make_backend(server, tmp_path).generator().generate([request_])[0].invalid is False


# -- the capability probe ------------------------------------------------------------------------


def test_the_probe_retries_a_passing_outage_and_a_passing_invalid_reply(server, tmp_path):
    server.inject("503", times=RETRIES - 1, probe=True)
    server.inject("truncated-logprobs", probe=True)
    make_backend(server, tmp_path).scorer().check_loglikelihood()
    assert [s.fault for s in server.requests(probe=True)][:3] == ["503", "truncated-logprobs", None]


@pytest.mark.parametrize("fault", ["503", "hang", "malformed"])
def test_a_probe_that_cannot_reach_the_server_stops_with_a_typed_error_not_a_missing_capability(server, tmp_path, fault):
    server.inject(fault, times=RETRIES + 1, probe=True)
    backend = make_backend(server, tmp_path, timeout_s=0.5)
    with pytest.raises(ServerUnavailableError) as error:
        backend.scorer().check_loglikelihood()
    assert not isinstance(error.value, CapabilityError)
    assert "the truth probe could not reach" in str(error.value)
    assert "not a missing capability" in str(error.value)
    assert len(server.requests(probe=True)) == RETRIES + 1


def test_a_probe_whose_replies_stay_invalid_is_no_missing_capability_either(server, tmp_path):
    server.inject("nan-logprob", times=RETRIES + 1, probe=True)
    with pytest.raises(InvalidReplyError, match="truth probe got no valid reply"):
        make_backend(server, tmp_path).scorer().check_loglikelihood()


def test_a_server_refusing_the_key_is_an_api_error_not_a_missing_capability(server, tmp_path):
    server.inject("401", probe=True)
    with pytest.raises(ApiError, match="HTTP 401") as error:
        make_backend(server, tmp_path).scorer().check_loglikelihood()
    assert not isinstance(error.value, CapabilityError)


def test_a_server_without_prompt_logprobs_is_still_a_missing_capability_at_once(server, tmp_path):
    server.state.prompt_logprobs = False
    with pytest.raises(CapabilityError, match="prompt log-probabilities"):
        make_backend(server, tmp_path).scorer().check_loglikelihood()
    assert len(server.requests(probe=True)) == 1
