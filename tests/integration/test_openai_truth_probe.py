"""The truth probe against the loopback server behaving as real servers do.

- SmolLM2-135M served with each prompt token scored from the logits one
  position late (llama-cpp-python's server on a model without a BOS) is refused
  at the probe, naming the server, the check and the cause; served correctly it
  passes and scores what the hf backend scores.
- A server that drops characters split across byte-level tokens from its token
  texts (llama-cpp-python again) scores Chinese, Korean and Māori exactly as hf
  does, through its tokenize route or an echo of each context, and is refused
  at the probe only when told to trust its offsets.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("torch")

from culturebias.adapters.hf.backend import create_backend as hf_backend  # noqa: E402
from culturebias.adapters.hf.options import HFOptions  # noqa: E402
from culturebias.adapters.openai.backend import create_backend as openai_backend  # noqa: E402
from culturebias.adapters.openai.options import OpenAIOptions  # noqa: E402
from culturebias.adapters.openai.truth_probe import TruthProbeError  # noqa: E402
from culturebias.domain.requests import LoglikelihoodRequest  # noqa: E402
from culturebias.testing.openai_server import HFTokenSource, OpenAITestServer  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402

RELATIVE = 1e-4
HF_CACHE = Path(tempfile.mkdtemp(prefix="culturebias-truth-hf-"))
REQUESTS = [
    LoglikelihoodRequest("", "男生收入高才會有話語權"),
    LoglikelihoodRequest("問題：", "我覺得老婆比較會修電腦"),
    LoglikelihoodRequest("정답: ", "그 사람은 의사입니다."),
    LoglikelihoodRequest("Kia ora, ko ", "Tāmaki Makaurau tēnei"),
    LoglikelihoodRequest("The answer is", " A"),
]


@functools.lru_cache(maxsize=None)
def tiny(arch: str):
    path = str(cached_tiny_causal_lm(arch=arch))
    return HFTokenSource(path), hf_backend(HFOptions(backend="hf", path=path, device="cpu", batch_size=8), HF_CACHE)


def _serve(tmp_path, source, generator, name: str, **options):
    server = OpenAITestServer(name, source, generator).start()
    settings = {"backend": "openai", "api_base": server.api_base, "path": name, "max_concurrency": 2, "timeout_s": 120.0}
    settings.update(options)
    return server, openai_backend(OpenAIOptions(**settings), tmp_path / "cache")


@pytest.mark.slow
def test_smollm2_scored_one_position_late_is_refused_and_scored_aligned_agrees_with_hf(smollm2_installed, user_cache_dir, tmp_path):
    from culturebias.adapters.hf.embedded import materialise

    local = hf_backend(HFOptions(device="cpu"), user_cache_dir)  # the embedded default, converted once
    folder, _, _ = materialise(None, user_cache_dir)
    source = HFTokenSource(str(folder))
    server, backend = _serve(tmp_path, source, local.generator(), "smollm2")
    try:
        server.state.late_logits = True
        with pytest.raises(TruthProbeError) as refused:
            backend.scorer().check_loglikelihood()
        message = str(refused.value)
        assert server.api_base in message and "alignment check on the counting sequence" in message
        assert "shifted by one token (late)" in message and "llama-cpp-python" in message
        assert server.requests() == []  # refused before anything of the run was asked

        server.state.late_logits = False
        scorer = backend.scorer()
        scorer.check_loglikelihood()
        got = scorer.loglikelihood(REQUESTS)
        want = local.scorer().loglikelihood(REQUESTS)
        for request, have, expected in zip(REQUESTS, got, want):
            assert have.n_tokens == expected.n_tokens, request
            assert have.logprob == pytest.approx(expected.logprob, rel=1e-3), request
    finally:
        server.stop()


@pytest.mark.parametrize("tokenize_routes, chosen", [(True, "tokenize:/extras/tokenize"), (False, "context-echo")])
def test_dropped_split_characters_score_exactly_as_hf_without_trusting_token_texts(tmp_path, tokenize_routes, chosen):
    source, local = tiny("gpt2")
    server, backend = _serve(tmp_path, source, local.generator(), "tiny")
    try:
        server.state.drop_split_characters = True
        server.state.tokenize_routes = tokenize_routes
        scorer = backend.scorer()
        scorer.check_loglikelihood()
        assert scorer.provenance.boundary_source == chosen
        got = scorer.loglikelihood(REQUESTS)
        want = local.scorer().loglikelihood(REQUESTS)
        for request, have, expected in zip(REQUESTS, got, want):
            assert have.n_tokens == expected.n_tokens, request
            assert have.logprob == pytest.approx(expected.logprob, rel=RELATIVE), request
    finally:
        server.stop()


@pytest.mark.parametrize(
    "boundary_source, server_state, named",
    [
        # trusting the offsets of a server that drops split characters
        (
            "offsets",
            {"drop_split_characters": True},
            ["offsets check on the Chinese sentence", "drops characters split across byte-level tokens", "model.boundary_source=tokenize"],
        ),
        # asking for a tokenize route the server lacks
        ("tokenize", {"tokenize_routes": False}, ["tokenize check", "no tokenize route"]),
    ],
)
def test_a_boundary_source_the_server_cannot_serve_is_refused_at_the_probe(tmp_path, boundary_source, server_state, named):
    source, local = tiny("gpt2")
    server, backend = _serve(tmp_path, source, local.generator(), "tiny", boundary_source=boundary_source)
    try:
        for name, value in server_state.items():
            setattr(server.state, name, value)
        with pytest.raises(TruthProbeError) as refused:
            backend.scorer().check_loglikelihood()
        for words in named:
            assert words in str(refused.value)
    finally:
        server.stop()


def test_a_server_that_adds_a_bos_places_boundaries_by_token_ids_as_by_its_offsets(tmp_path):
    # llama-shaped tokenizer: the server adds <s>, lists it and counts it in its offsets (as vLLM does).
    # hf adds BOS only before an empty context (PROTOCOLS §0.1), so only that request equals hf.
    source, local = tiny("llama")
    server = OpenAITestServer("tiny-llama", source, local.generator()).start()
    try:
        scored = {}
        for boundary in ("tokenize", "offsets", "context-echo"):
            options = OpenAIOptions(api_base=server.api_base, path="tiny-llama", boundary_source=boundary, cache="off")
            scorer = openai_backend(options, tmp_path / boundary).scorer()
            scorer.check_loglikelihood()
            scored[boundary] = [(r.logprob, r.n_tokens) for r in scorer.loglikelihood(REQUESTS)]
        assert scored["tokenize"] == scored["offsets"] == scored["context-echo"]
        [alone] = local.scorer().loglikelihood(REQUESTS[:1])
        assert scored["tokenize"][0][1] == alone.n_tokens
        assert scored["tokenize"][0][0] == pytest.approx(alone.logprob, rel=RELATIVE)
    finally:
        server.stop()


def test_scoring_without_a_preflight_runs_the_probe_first(tmp_path):
    source, local = tiny("gpt2")
    server, backend = _serve(tmp_path, source, local.generator(), "tiny")
    try:
        server.state.late_logits = True  # a random model's guesses are no evidence; the probe must still run
        backend.scorer().loglikelihood(REQUESTS[:1])
        assert len(server.requests(probe=True)) > len(server.requests())
    finally:
        server.stop()
