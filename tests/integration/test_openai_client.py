"""The openai backend against a real HTTP server on 127.0.0.1: retries, Retry-After, timeouts,
malformed replies, concurrency limit, request cache, API key handling and capability errors.

The server serves a character-level test model whose numbers are hand-computable:
the character at position i costs -1.0 when i is even and -1.5 when i is odd.
"""

from __future__ import annotations

import io
import json
import random

import pytest
import structlog

from culturebias.adapters.openai.backend import create_backend
from culturebias.adapters.openai.client import ApiError
from culturebias.adapters.openai.retry_policy import Backoff
from culturebias.testing.openai_server import CharacterTokenSource, OpenAITestServer
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
from culturebias.adapters.openai.options import OpenAIOptions
from culturebias.domain.errors import CapabilityError, ConfigError
from culturebias.domain.requests import ChatMessage, GenerationParams, GenerationRequest, LoglikelihoodRequest

MODEL = "char-test-model"
SECRET = "sk-test-5f3a9c1e0b7d4e2a"


def char_cost(context: str, character: str) -> float:
    return -1.0 if len(context) % 2 == 0 else -1.5


def reply_rule(request: GenerationRequest, prompt: str) -> str:
    said = f"chat:{request.messages[-1].content}" if request.messages is not None else f"plain:{prompt}"
    return f"{said}:T={request.params.temperature}:max={request.params.max_new_tokens}"


@pytest.fixture
def server():
    with OpenAITestServer(MODEL, CharacterTokenSource(ScriptedScorer(char_cost)), ScriptedGenerator(reply_rule)) as running:
        yield running


def make_backend(server, tmp_path, sleeps=None, **overrides):
    options = {"backend": "openai", "api_base": server.api_base, "path": MODEL, "max_retries": 3, "timeout_s": 30.0}
    options.update(overrides)
    return create_backend(
        OpenAIOptions(**options),
        tmp_path / "cache",
        sleep=(sleeps.append if sleeps is not None else (lambda s: None)),
        backoff=Backoff(base_s=0.5, cap_s=4.0, rng=random.Random(0)),
    )


REQUESTS = [
    LoglikelihoodRequest("ab", "cd"),  # positions 2, 3: -1.0 - 1.5
    LoglikelihoodRequest("", "abc"),  # first character unscored; positions 1, 2: -1.5 - 1.0
    LoglikelihoodRequest("xyz", "w"),  # position 3: -1.5
]
EXPECTED = [(-2.5, 2), (-2.5, 2), (-1.5, 1)]


def scored(backend, requests=REQUESTS):
    return [(r.logprob, r.n_tokens) for r in backend.scorer().loglikelihood(requests)]


def test_scores_come_back_in_order_with_hand_computed_values(server, tmp_path):
    backend = make_backend(server, tmp_path)
    backend.scorer().check_loglikelihood()
    assert scored(backend) == EXPECTED
    bodies = [s.body for s in server.requests("completions")]
    assert all(b["echo"] is True and b["logprobs"] == 1 and b["model"] == MODEL for b in bodies)


def test_429_waits_exactly_the_retry_after_the_server_asks_for(server, tmp_path):
    sleeps: list[float] = []
    server.inject("429", times=2, retry_after="2")
    backend = make_backend(server, tmp_path, sleeps)
    assert scored(backend, REQUESTS[:1]) == EXPECTED[:1]
    assert sleeps == [2.0, 2.0]
    assert [s.fault for s in server.requests()] == ["429", "429", None]


def test_500_backs_off_exponentially_with_jitter(server, tmp_path):
    sleeps: list[float] = []
    server.inject("500", times=3)
    backend = make_backend(server, tmp_path, sleeps)
    assert scored(backend, REQUESTS[:1]) == EXPECTED[:1]
    # attempt n waits in [d/2, d], d = min(4, 0.5·2ⁿ)
    assert len(sleeps) == 3
    for n, waited in enumerate(sleeps):
        ceiling = min(4.0, 0.5 * 2**n)
        assert ceiling / 2 <= waited <= ceiling
    assert len(set(sleeps)) == 3


def test_a_reply_that_never_comes_times_out_and_is_retried(server, tmp_path):
    server.inject("hang")  # no reply until the server stops: a timeout however loaded the machine is
    backend = make_backend(server, tmp_path, timeout_s=1.0)
    assert scored(backend, REQUESTS[:1]) == EXPECTED[:1]
    faults = [s.fault for s in server.requests()]
    assert faults[0] == "hang" and set(faults[1:]) == {None}


def test_malformed_json_is_retried(server, tmp_path):
    server.inject("malformed", times=2)
    backend = make_backend(server, tmp_path)
    assert scored(backend, REQUESTS[:1]) == EXPECTED[:1]
    assert [s.fault for s in server.requests()] == ["malformed", "malformed", None]


def test_retries_are_bounded_and_the_error_says_so(server, tmp_path):
    server.inject("500", times=10)
    backend = make_backend(server, tmp_path, max_retries=2)
    with pytest.raises(ApiError, match="giving up after 3 attempts: HTTP 500"):
        backend.scorer().loglikelihood(REQUESTS[:1])
    assert len(server.requests()) == 3


def test_client_errors_are_not_retried(server, tmp_path):
    backend = make_backend(server, tmp_path, path="no-such-model")
    with pytest.raises(CapabilityError, match="HTTP 404: model 'no-such-model' does not exist"):
        backend.scorer().loglikelihood(REQUESTS[:1])  # the truth probe's first request, not retried
    assert len(server.requests(probe=True)) == 1


def test_a_rerun_is_served_from_the_disk_cache(server, tmp_path):
    first = make_backend(server, tmp_path)
    assert scored(first) == EXPECTED
    generated = first.generator().generate([GenerationRequest(prompt="hello")])
    sent = len(server.requests())
    assert sent == 4
    again = make_backend(server, tmp_path)  # a new process would build a new backend the same way
    assert scored(again) == EXPECTED
    assert again.generator().generate([GenerationRequest(prompt="hello")]) == generated
    assert len(server.requests()) == sent
    # a different model name is a different key
    asked = len(server.requests(probe=True))
    other = make_backend(server, tmp_path, path="other")
    with pytest.raises(CapabilityError):
        other.scorer().loglikelihood(REQUESTS[:1])
    assert len(server.requests(probe=True)) == asked + 1


def test_cache_holds_no_api_key(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    backend = make_backend(server, tmp_path)
    scored(backend)
    backend.close()
    for path in (tmp_path / "cache").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_no_more_than_max_concurrency_requests_are_in_flight(server, tmp_path):
    # each reply but the last waits for a second request in flight (the last has none to wait for)
    server.inject("gate", times=5, together=2)
    backend = make_backend(server, tmp_path, max_concurrency=2)
    requests = [LoglikelihoodRequest("ab", "c" * n) for n in range(1, 7)]
    results = backend.scorer().loglikelihood(requests)
    assert [r.n_tokens for r in results] == [1, 2, 3, 4, 5, 6]
    assert server.state.max_in_flight == 2


def test_api_key_from_the_environment_is_sent_and_never_logged(server, tmp_path, monkeypatch):
    monkeypatch.setenv("MY_PROVIDER_KEY", SECRET)
    log = io.StringIO()
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=log))
    try:
        server.inject("429", retry_after="0")
        backend = make_backend(server, tmp_path, api_key_env="MY_PROVIDER_KEY")
        scored(backend, REQUESTS[:1])
        with pytest.raises((ApiError, CapabilityError)) as error:
            make_backend(server, tmp_path, api_key_env="MY_PROVIDER_KEY", path="missing").scorer().loglikelihood(REQUESTS[:1])
    finally:
        structlog.reset_defaults()
    assert {s.authorization for s in server.requests()} == {f"Bearer {SECRET}"}
    assert "api retry" in log.getvalue()
    assert SECRET not in log.getvalue()
    assert SECRET not in str(error.value)
    assert SECRET not in repr(backend.client.__dict__)


def test_api_key_from_a_secrets_file(server, tmp_path):
    secret_file = tmp_path / "key.txt"
    secret_file.write_text(SECRET + "\n", encoding="utf-8")
    backend = make_backend(server, tmp_path, api_key_file=str(secret_file))
    scored(backend, REQUESTS[:1])
    assert server.requests()[0].authorization == f"Bearer {SECRET}"
    with pytest.raises(ConfigError, match="cannot be read"):
        make_backend(server, tmp_path, api_key_file=str(tmp_path / "absent.txt"))


def test_without_a_key_no_authorization_header_is_sent(server, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    scored(make_backend(server, tmp_path), REQUESTS[:1])
    assert server.requests()[0].authorization is None


def test_a_server_without_prompt_logprobs_fails_the_probe_before_any_scoring(server, tmp_path):
    server.state.prompt_logprobs = False
    backend = make_backend(server, tmp_path)
    with pytest.raises(CapabilityError, match="prompt log-probabilities") as error:
        backend.scorer().check_loglikelihood()
    assert error.value.backend == "openai"
    assert len(server.requests(probe=True)) == 1  # one probe, not retried


def test_a_server_without_a_completions_endpoint_fails_the_probe(server, tmp_path):
    backend = make_backend(server, tmp_path, api_base=server.api_base.replace("/v1", "/v2"))
    with pytest.raises(CapabilityError, match="HTTP 404"):
        backend.scorer().check_loglikelihood()


def test_generation_uses_chat_for_messages_and_completions_for_prompts(server, tmp_path):
    backend = make_backend(server, tmp_path)
    params = GenerationParams(max_new_tokens=7, temperature=0.5, top_p=0.9, seed=3, stop=("\n",))
    requests = [
        GenerationRequest.chat([ChatMessage("user", "hello")], params),
        GenerationRequest(prompt="plain xyz"),
        GenerationRequest.chat([ChatMessage("system", "s"), ChatMessage("user", "second")]),
    ]
    texts = [r.text for r in backend.generator().generate(requests)]
    assert texts == ["chat:hello:T=0.5:max=7", "plain:plain xyz:T=0.0:max=64", "chat:second:T=0.0:max=64"]
    # Requests go out concurrently: the server sees them in any order, and a loaded machine may
    # time one out and send it again, so the distinct bodies are what is compared.
    chat_bodies = {json.dumps(s.body, sort_keys=True): s.body for s in server.requests("chat/completions")}.values()
    assert sorted(len(b["messages"]) for b in chat_bodies) == [1, 2]
    [hello] = [b for b in chat_bodies if b["messages"] == [{"role": "user", "content": "hello"}]]
    assert (hello["top_p"], hello["seed"], hello["stop"]) == (0.9, 3, ["\n"])
    assert {s.body["prompt"] for s in server.requests("completions")} == {"plain xyz"}


def test_templates_and_masked_scoring_are_refused_with_the_reason(server, tmp_path):
    backend = make_backend(server, tmp_path)
    assert backend.templater().has_chat_template  # the server applies its own to /v1/chat/completions
    with pytest.raises(CapabilityError, match="chat-templated text for scoring.*model.tokenizer=HUB_ID_OR_DIR"):
        backend.templater().check_render()  # but this server cannot render it for scoring (no template endpoint)
    with pytest.raises(CapabilityError, match="pseudo-log-likelihood"):
        backend.pseudo_scorer()
    plain = make_backend(server, tmp_path, chat_template="none").templater()
    assert plain.has_chat_template is False


def test_configuration_mistakes_are_named(tmp_path):
    with pytest.raises(ConfigError, match="model.api_base"):
        create_backend(OpenAIOptions(backend="openai", path="m"), tmp_path)
    with pytest.raises(ConfigError, match="model.path"):
        create_backend(OpenAIOptions(backend="openai", api_base="http://127.0.0.1:1/v1"), tmp_path)
