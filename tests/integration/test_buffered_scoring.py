"""The scorer's shared prefixes prefilled on one buffer in merged chunks give the scores of level-by-level prefill and of no reuse."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

pytest.importorskip("torch")

from culturebias.adapters.hf.backend import create_backend  # noqa: E402
from culturebias.adapters.hf.options import HFOptions  # noqa: E402
from culturebias.adapters.hf.scorer import HFScorer  # noqa: E402
from culturebias.domain.requests import ChatMessage, LoglikelihoodRequest  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402
from culturebias.testing.tolerance import assert_model_close  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "culturebias-test-cache"
INSTRUCTION = "다음 글을 읽고 질문에 답하세요. 보기 중 하나를 고르세요.\n"
CONTEXTS = ["의사와 간호사가 병원에서 만났다.", "의사와 간호사가 학교에서 만났다.", "두 사람이 식당에서 이야기했다."]
ORDERS = [("의사", "간호사", "알 수 없음"), ("간호사", "알 수 없음", "의사"), ("알 수 없음", "의사", "간호사")]


def bbq_likelihood_requests(templater):
    """KoBBQ-shaped likelihood requests: an instruction, a context, options in three orders, each option scored."""
    requests = []
    for context in CONTEXTS:
        for order in ORDERS:
            question = INSTRUCTION + context + "\n누가 의사인가?\n" + "\n".join(f"({k}) {o}" for k, o in zip("ABC", order))
            prompt = templater.render([ChatMessage("user", question)], add_generation_prompt=True)
            requests += [LoglikelihoodRequest(prompt, f"({k})") for k in "ABC"] + [LoglikelihoodRequest(prompt, order[0])]
    return requests


def scores(backend, **flags):
    scorer = HFScorer(backend.loaded(), backend.options.model_copy(update={"prefix_cache": flags.pop("prefix_cache", True)}), **flags)
    results = scorer.loglikelihood(bbq_likelihood_requests(backend.templater()))
    return [r.logprob for r in results], [r.n_tokens for r in results], scorer


@pytest.mark.parametrize(("arch", "batch_size"), [("llama", 4), ("gpt2", 16)])
def test_buffered_prefixes_score_as_level_prefill_and_as_no_reuse(arch, batch_size):
    backend = create_backend(HFOptions(path=str(cached_tiny_causal_lm(arch=arch)), batch_size=batch_size), CACHE)
    buffered, n, fast = scores(backend)
    levels, n_levels, slow = scores(backend, buffered_prefill=False)
    whole, n_whole, plain = scores(backend, prefix_cache=False)
    assert fast._buffered and not slow._buffered
    assert n == n_levels == n_whole and len(set(buffered)) > 3  # real, varied scores
    for a, b, c in zip(buffered, levels, whole):
        assert_model_close(a, b, what="buffered vs level prefill")
        assert_model_close(a, c, what="buffered vs no reuse")
    assert fast.tokens_run < 0.5 * plain.tokens_run


def test_a_sliding_window_model_scores_with_level_prefill():
    backend = create_backend(HFOptions(path=str(cached_tiny_causal_lm(arch="mistral", seed=3)), batch_size=4), CACHE)
    reused, _, scorer = scores(backend)
    whole, _, _ = scores(backend, prefix_cache=False)
    assert not scorer._buffered
    for a, b in zip(reused, whole):
        assert_model_close(a, b, what="sliding window, prefix reuse vs none")
