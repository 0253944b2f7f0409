"""The openai backend against a real HTTP server serving a real tiny transformers model.

The server tokenises every prompt itself (adding BOS where the tokenizer adds
one, as serving engines do) and returns each prompt token's log-probability;
the backend places the context/continuation boundary from ``text_offset``. On a
model whose tokenizer adds no BOS (the gpt2-shaped one) that must give exactly
the ``hf`` backend's numbers, straddling multi-byte tokens included.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("torch")

from culturebias.adapters.hf.backend import create_backend as hf_backend  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402
from culturebias.adapters.openai.backend import create_backend as openai_backend  # noqa: E402
from culturebias.testing.openai_server import HFTokenSource, OpenAITestServer  # noqa: E402
from culturebias.adapters.hf.options import HFOptions  # noqa: E402
from culturebias.adapters.openai.options import OpenAIOptions  # noqa: E402
from culturebias.domain.errors import CapabilityError  # noqa: E402
from culturebias.domain.requests import ChatMessage, GenerationParams, GenerationRequest, LoglikelihoodRequest  # noqa: E402

RELATIVE = 1e-4
HF_CACHE = Path(tempfile.mkdtemp(prefix="culturebias-openai-hf-"))
SENTENCES = ["男生收入高才會有話語權", "我覺得老婆比較會修電腦", "The nurse said she would help.", "그 사람은 의사입니다."]
CONTEXTS = ["", "問題：", "hello ", "男", "The answer is"]


@functools.lru_cache(maxsize=None)
def hf(arch: str, boundary_rule: str = "straddle-to-continuation"):
    path = str(cached_tiny_causal_lm(arch=arch))
    return hf_backend(HFOptions(backend="hf", path=path, device="cpu", batch_size=8, boundary_rule=boundary_rule), HF_CACHE)


@functools.lru_cache(maxsize=None)
def token_source(arch: str) -> HFTokenSource:
    return HFTokenSource(str(cached_tiny_causal_lm(arch=arch)))


@pytest.fixture
def serve(tmp_path):
    running = []

    def start(arch: str, **overrides):
        server = OpenAITestServer(f"tiny-{arch}", token_source(arch), hf(arch).generator()).start()
        running.append(server)
        options = {"backend": "openai", "api_base": server.api_base, "path": f"tiny-{arch}", "max_concurrency": 4}
        options.update(overrides)
        return server, openai_backend(OpenAIOptions(**options), tmp_path / "cache")

    yield start
    for server in running:
        server.stop()


@pytest.mark.parametrize("source", ["tokenize", "offsets", "context-echo"])
@pytest.mark.parametrize("rule", ["straddle-to-continuation", "authors"])
def test_loglikelihoods_equal_the_hf_backend_on_the_same_model(serve, rule, source):
    server, backend = serve("gpt2", boundary_rule=rule, boundary_source=source)
    requests = [LoglikelihoodRequest(c, s) for c in CONTEXTS for s in SENTENCES]
    requests.append(LoglikelihoodRequest("hello ", "world"))
    scorer = backend.scorer()
    scorer.check_loglikelihood()
    assert scorer.provenance.boundary_source == {"tokenize": "tokenize:/extras/tokenize"}.get(source, source)
    got = scorer.loglikelihood(requests)
    want = hf("gpt2", rule).scorer().loglikelihood(requests)
    for request, have, expected in zip(requests, got, want):
        assert have.n_tokens == expected.n_tokens, request
        assert have.is_greedy == expected.is_greedy, request
        assert have.logprob == pytest.approx(expected.logprob, rel=RELATIVE), request
    # "hello world" is [he][l][l][o][ w][or][ld]: " w" straddles, so the two rules really differ here
    assert got[-1].n_tokens == (3 if rule == "straddle-to-continuation" else 2)


def test_a_bos_the_server_adds_is_context_for_an_empty_context(serve):
    # llama-shaped tokenizer: the server prepends <s> and counts it in the offsets (as vLLM does)
    server, backend = serve("llama")
    requests = [LoglikelihoodRequest("", s) for s in SENTENCES]
    got = backend.scorer().loglikelihood(requests)
    want = hf("llama").scorer().loglikelihood(requests)
    for have, expected in zip(got, want):
        assert have.n_tokens == expected.n_tokens
        assert have.logprob == pytest.approx(expected.logprob, rel=RELATIVE)


def test_offsets_from_tokens_decoded_one_by_one_fail_the_probe_when_offsets_are_asked_for(serve):
    server, backend = serve("gpt2", boundary_source="offsets")
    server.state.offsets = "per-token"  # partial UTF-8 bytes decode to replacement characters
    with pytest.raises(CapabilityError, match="offsets check on the Chinese sentence"):
        backend.scorer().check_loglikelihood()


@pytest.mark.parametrize(
    "tokenize_routes, offsets, chosen",
    [(True, "per-token", "tokenize:/extras/tokenize"), (False, "incremental", "offsets"), (False, "per-token", "context-echo")],
)
def test_auto_takes_the_tokenize_route_else_offsets_that_add_up_else_a_context_echo(serve, tokenize_routes, offsets, chosen):
    server, backend = serve("gpt2")
    server.state.tokenize_routes = tokenize_routes
    server.state.offsets = offsets
    scorer = backend.scorer()
    scorer.check_loglikelihood()
    assert scorer.provenance.boundary_source == chosen
    requests = [LoglikelihoodRequest(c, s) for c in CONTEXTS for s in SENTENCES]
    got = scorer.loglikelihood(requests)
    want = hf("gpt2").scorer().loglikelihood(requests)
    for have, expected in zip(got, want):
        assert have.n_tokens == expected.n_tokens
        assert have.logprob == pytest.approx(expected.logprob, rel=RELATIVE)


def test_generation_through_the_server_equals_local_generation(serve):
    server, backend = serve("gpt2")
    requests = [
        GenerationRequest.chat([ChatMessage("user", "你想說什麼？")], GenerationParams(max_new_tokens=8)),
        GenerationRequest(prompt="The doctor said", params=GenerationParams(max_new_tokens=8)),
    ]
    remote = [r.text for r in backend.generator().generate(requests)]
    local = [r.text for r in hf("gpt2").generator().generate(requests)]
    assert remote == local
    assert [s.endpoint for s in server.requests()] == ["chat/completions", "completions"]
