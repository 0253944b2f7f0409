"""Per-item parity: the same tiny float32 model through ``hf`` and ``onnx`` gives the same numbers.

Log-likelihoods agree to 1e-4 relative, token counts and greediness exactly;
pseudo-log-likelihoods likewise; generated text is identical, greedy and seeded
sampling alike (both run transformers' generation procedure).
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("torch")

from culturebias.adapters.hf.backend import create_backend as hf_backend  # noqa: E402
from culturebias.adapters.hf.testing import cached_tiny_causal_lm, cached_tiny_masked_lm  # noqa: E402
from culturebias.adapters.onnx.backend import create_backend as onnx_backend  # noqa: E402
from culturebias.bootstrap.settings import ModelSettings  # noqa: E402
from culturebias.domain.requests import (  # noqa: E402
    ChatMessage,
    GenerationParams,
    GenerationRequest,
    LoglikelihoodRequest,
    PseudoLoglikelihoodRequest,
)

RELATIVE = 1e-4
CACHE = Path(tempfile.mkdtemp(prefix="culturebias-parity-"))

SENTENCES = [
    "男生收入高才會有話語權",
    "女生收入高才會有話語權",
    "男人就是應該負責賺錢養家，不然要被笑。",
    "我覺得老婆比較會修電腦",
    "客家人都很節儉嗎？",
    "그 사람은 의사입니다.",
    "The nurse said she would help.",
]
USER_PROMPTS = ["", "你想說什麼？", "說點什麼吧！"]


@functools.lru_cache(maxsize=None)
def backends(arch: str, batch_size: int = 4):
    path = str(cached_tiny_causal_lm(arch=arch))
    common = {"path": path, "device": "cpu", "batch_size": batch_size}
    return (
        hf_backend(ModelSettings(backend="hf", **common), CACHE),
        onnx_backend(ModelSettings(backend="onnx", **common), CACHE),
    )


def scorers(arch: str, **options):
    """Both scorers over the models loaded once per architecture, with ``options`` as model settings."""
    from culturebias.adapters.hf.scorer import HFScorer
    from culturebias.adapters.onnx.backend import OnnxScorer

    hf, onnx = backends(arch)
    settings = hf.settings.model_copy(update=options)
    return HFScorer(hf.loaded(), settings), OnnxScorer(onnx.causal(), settings.model_copy(update={"backend": "onnx"}))


def requests_for(templater) -> list[LoglikelihoodRequest]:
    contexts = [templater.render([ChatMessage("user", p)]) for p in USER_PROMPTS] + ["", "問題：", "hello "]
    return [LoglikelihoodRequest(c, s) for c in contexts for s in SENTENCES] + [LoglikelihoodRequest("hello", "")]


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
@pytest.mark.parametrize(
    "options",
    [
        {"batch_size": 16},
        {"batch_size": 3, "prefix_cache": False},
        {"batch_size": 5, "boundary_rule": "authors"},
    ],
    ids=["prefix-reuse", "no-prefix", "authors-rule"],
)
def test_loglikelihoods_agree_per_item(arch, options):
    hf, onnx = backends(arch)
    requests = requests_for(hf.templater())
    assert onnx.templater().render([ChatMessage("user", "x")]) == hf.templater().render([ChatMessage("user", "x")])
    hf_scorer, onnx_scorer = scorers(arch, **options)
    assert onnx_scorer.provenance.backend == "onnx"
    expected = hf_scorer.loglikelihood(requests)
    got = onnx_scorer.loglikelihood(requests)
    for request, want, have in zip(requests, expected, got):
        assert have.n_tokens == want.n_tokens, request
        assert have.is_greedy == want.is_greedy, request
        assert have.logprob == pytest.approx(want.logprob, rel=RELATIVE, abs=1e-9), request


def test_pseudo_loglikelihoods_agree_per_item():
    path = str(cached_tiny_masked_lm())
    common = {"path": path, "device": "cpu", "kind": "masked", "batch_size": 3}
    hf = hf_backend(ModelSettings(backend="hf", **common), CACHE).pseudo_scorer()
    onnx = onnx_backend(ModelSettings(backend="onnx", **common), CACHE).pseudo_scorer()
    texts = ["Kiwis love rugby, and Aucklanders complain about traffic.", "她是一名医生，他是一名护士。", "The doctor said"]
    requests = [PseudoLoglikelihoodRequest(t, s, e) for t in texts for s, e in ((0, len(t)), (2, 9))]
    for request, want, have in zip(requests, hf.pseudo_loglikelihood(requests), onnx.pseudo_loglikelihood(requests)):
        assert have.n_tokens == want.n_tokens, request
        assert have.logprob == pytest.approx(want.logprob, rel=RELATIVE), request


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_generation_is_identical(arch):
    hf, onnx = backends(arch)
    greedy = GenerationParams(max_new_tokens=12)
    sampled = GenerationParams(max_new_tokens=10, temperature=0.8, top_p=0.9, seed=5)
    requests = [
        GenerationRequest(prompt="The doctor said", params=greedy),
        GenerationRequest.chat([ChatMessage("user", "你想說什麼？")], greedy),
        GenerationRequest(prompt="男生收入", params=GenerationParams(max_new_tokens=8, stop=("。", "男"))),
        GenerationRequest(prompt="The answer is", params=sampled),
        GenerationRequest(prompt="男生", params=sampled),
    ]
    expected = [r.text for r in hf.generator().generate(requests)]
    got = [r.text for r in onnx.generator().generate(requests)]
    assert got == expected
    assert all(len(text) > 0 for text in expected[:2])
