"""Contract of the LoglikelihoodScorer port (PROTOCOLS §0.1), for every adapter in culturebias.testing.backend_factories.SCORERS.

A plugin runs it on its own scorer by importing this module's tests and overriding ``make``: a fixture
giving ``factory(batch_size=...)`` that builds the scorer.
"""

from __future__ import annotations

import math

import pytest

from culturebias.adapters.progress.reporters import NullTask
from culturebias.domain.identity import ModelIdentity, ScoreProvenance
from culturebias.domain.requests import LoglikelihoodRequest as Req
from culturebias.domain.requests import LoglikelihoodResult
from culturebias.ports.scoring import LoglikelihoodScorer
from culturebias.testing import backend_factories
from culturebias.testing.tolerance import assert_model_close


ADAPTERS = sorted(backend_factories.SCORERS)
CONTEXT = "<s><|im_start|>user\n你想說什麼？<|im_end|>\n<|im_start|>assistant\n"
REQUESTS = [
    Req(CONTEXT, "男生收入高才會有話語權"),
    Req(CONTEXT, "女生收入高才會有話語權"),
    Req("", "男人應該負責養家。"),
    Req("The answer is", " A"),
    Req("The answer is", " B"),
    Req("다음 문장을 읽고", " 질문에 답하세요."),
    Req(CONTEXT, "The nurse said she would help, and the doctor agreed to wait for the results."),
]


@pytest.fixture(params=ADAPTERS)
def make(request):
    return backend_factories.SCORERS[request.param]


def _same(a: LoglikelihoodResult, b: LoglikelihoodResult) -> None:
    assert a.n_tokens == b.n_tokens
    assert a.is_greedy == b.is_greedy
    assert_model_close(a.logprob, b.logprob, what="the same request's log-likelihood")  # float32 kernels: batch shape moves the last bits


def test_is_a_scorer_with_identity_and_provenance(make):
    scorer = make()
    assert isinstance(scorer, LoglikelihoodScorer)
    assert isinstance(scorer.identity, ModelIdentity) and scorer.identity.backend
    assert scorer.identity.cache_key() == make().identity.cache_key()
    assert isinstance(scorer.provenance, ScoreProvenance) and scorer.provenance.backend == scorer.identity.backend
    scorer.check_loglikelihood()  # every adapter listed here supports it


def test_one_result_per_request_finite_and_non_positive(make):
    results = make().loglikelihood(REQUESTS)
    assert len(results) == len(REQUESTS)
    for result in results:
        assert isinstance(result, LoglikelihoodResult)
        assert math.isfinite(result.logprob) and result.logprob <= 0
        assert result.n_tokens >= 1


def test_results_follow_request_order(make):
    scorer = make()
    forward = scorer.loglikelihood(REQUESTS)
    backward = scorer.loglikelihood(REQUESTS[::-1])
    for a, b in zip(forward, backward[::-1]):
        _same(a, b)


def test_batch_size_does_not_change_scores(make):
    one = make(batch_size=1).loglikelihood(REQUESTS)
    many = make(batch_size=5).loglikelihood(REQUESTS)
    for a, b in zip(one, many):
        _same(a, b)


def test_duplicates_give_equal_results_and_count_in_progress(make):
    requests = [REQUESTS[0], REQUESTS[3], REQUESTS[0], REQUESTS[0], REQUESTS[3]]
    task = NullTask()
    results = make().loglikelihood(requests, progress=task)
    assert task.done == len(requests)
    _same(results[0], results[2])
    _same(results[0], results[3])
    _same(results[1], results[4])


def test_progress_advances_by_the_number_of_requests(make):
    task = NullTask()
    make(batch_size=2).loglikelihood(REQUESTS, progress=task)
    assert task.done == len(REQUESTS)


def test_no_requests_no_results(make):
    assert make().loglikelihood([]) == []


def test_chain_rule_on_clean_token_boundaries(make):
    # Space-separated English splits into the same tokens whether scored whole or in parts,
    # so log p(x+y | c) = log p(x | c) + log p(y | c+x), and the token counts add up.
    scorer = make()
    whole, first, second = scorer.loglikelihood(
        [Req("The", " answer is"), Req("The", " answer"), Req("The answer", " is")]
    )
    assert whole.n_tokens == first.n_tokens + second.n_tokens
    assert_model_close(first.logprob + second.logprob, whole.logprob, what="log-likelihood by the chain rule")
    assert whole.is_greedy == (first.is_greedy and second.is_greedy)


def test_empty_context_scores_the_continuation(make):
    scorer = make()
    empty, with_context = scorer.loglikelihood([Req("", "hello world"), Req("The", " hello world")])
    # With BOS prepended every token is scored, else tokens 2..n: never more than with a context.
    assert 1 <= empty.n_tokens <= with_context.n_tokens
    assert math.isfinite(empty.logprob) and empty.logprob <= 0


def test_context_changes_nothing_but_the_conditioning(make):
    scorer = make()
    a, b = scorer.loglikelihood([Req("The answer is", " A"), Req("The result is", " A")])
    assert a.n_tokens == b.n_tokens
