"""The onnx backend on the real embedded default (SmolLM2-135M-Instruct): export once, agree with hf.

Slow: the first run converts the GGUF (hf adapter) and exports it to ONNX (~1 min);
both are cached under the user cache (``$XDG_CACHE_HOME/culturebias``).
"""

from __future__ import annotations

import pytest

from culturebias.adapters.hf.options import HFOptions
from culturebias.adapters.onnx.options import OnnxOptions
from culturebias.domain.requests import ChatMessage, GenerationParams, GenerationRequest, LoglikelihoodRequest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def backends(smollm2_installed, user_cache_dir):
    pytest.importorskip("onnxruntime")
    from culturebias.adapters.hf.backend import create_backend as hf
    from culturebias.adapters.onnx.backend import create_backend as onnx

    return hf(HFOptions(device="cpu"), user_cache_dir), onnx(OnnxOptions(backend="onnx", device="cpu"), user_cache_dir)


def test_smollm2_scores_and_generates_like_hf(backends):
    hf, onnx = backends
    assert onnx.scorer().identity.model == "embedded:smollm2-135m-instruct"
    assert onnx.scorer().identity.parameters == hf.scorer().identity.parameters
    context = hf.templater().render([ChatMessage("user", "你想說什麼？")])
    assert onnx.templater().render([ChatMessage("user", "你想說什麼？")]) == context
    requests = [
        LoglikelihoodRequest(context, "男生收入高才會有話語權"),
        LoglikelihoodRequest(context, "女生收入高才會有話語權"),
        LoglikelihoodRequest("", "The quick brown fox jumps over the lazy dog."),
        LoglikelihoodRequest("The capital of France is", " Paris"),
    ]
    for want, have in zip(hf.scorer().loglikelihood(requests), onnx.scorer().loglikelihood(requests)):
        assert (have.n_tokens, have.is_greedy) == (want.n_tokens, want.is_greedy)
        assert have.logprob == pytest.approx(want.logprob, rel=1e-4)
    prompt = [GenerationRequest.chat([ChatMessage("user", "What is the capital of France?")], GenerationParams(max_new_tokens=12))]
    assert [r.text for r in onnx.generator().generate(prompt)] == [r.text for r in hf.generator().generate(prompt)]
