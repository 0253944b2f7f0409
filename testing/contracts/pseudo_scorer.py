"""The PseudoLoglikelihoodScorer contract (PROTOCOLS §0.2), for every adapter in culturebias.testing.backend_factories.PSEUDO_SCORERS.

A plugin runs it on its own pseudo-scorer by importing this module's tests and overriding ``scorer``
(a fixture giving the pseudo-scorer).
"""

from __future__ import annotations


import pytest

from culturebias.domain.requests import PseudoLoglikelihoodRequest as Request
from culturebias.domain.requests import PseudoLoglikelihoodResult
from culturebias.ports.scoring import PseudoLoglikelihoodScorer
from culturebias.testing import backend_factories
from culturebias.testing.tolerance import assert_model_close


ADAPTERS = sorted(backend_factories.PSEUDO_SCORERS)


@pytest.fixture(scope="module", params=ADAPTERS)
def scorer(request) -> PseudoLoglikelihoodScorer:
    return backend_factories.PSEUDO_SCORERS[request.param]()


SENTENCES = [
    "The doctor said that the nurse would arrive soon.",
    "Kiwis love rugby, and Aucklanders complain about traffic.",
    "The quick brown fox jumps over the lazy dog.",
]


def whole(text: str, start: int = 0) -> Request:
    return Request(text, start, len(text))


class Progress:
    def __init__(self):
        self.done = 0

    def advance(self, n=1):
        self.done += n

    def close(self):
        pass


def test_it_is_a_pseudo_scorer_with_identity_and_provenance(scorer):
    assert isinstance(scorer, PseudoLoglikelihoodScorer)
    assert scorer.identity.cache_key()
    assert scorer.provenance.backend


def test_results_come_back_in_request_order_and_do_not_depend_on_the_batch(scorer):
    requests = [whole(s, 4) for s in SENTENCES]
    together = scorer.pseudo_loglikelihood(requests)
    alone = [scorer.pseudo_loglikelihood([r])[0] for r in requests]
    reversed_ = scorer.pseudo_loglikelihood(list(reversed(requests)))[::-1]
    assert all(isinstance(r, PseudoLoglikelihoodResult) for r in together)
    for a, b, c in zip(together, alone, reversed_):
        assert_model_close([b.logprob, c.logprob], [a.logprob] * 2, what="a PLL alone and in another order")  # float32 kernels
        assert a.n_tokens == b.n_tokens == c.n_tokens > 0
        assert a.logprob < 0


def test_a_pll_adds_up_over_disjoint_spans(scorer):
    # Every token is masked alone, so the span's score is the sum of its parts' scores.
    text = SENTENCES[0]
    cut = text.index(" said")
    full, left, right = scorer.pseudo_loglikelihood([whole(text), Request(text, 0, cut), Request(text, cut, len(text))])
    assert_model_close(left.logprob + right.logprob, full.logprob, what="a PLL summed over its spans")
    assert full.n_tokens == left.n_tokens + right.n_tokens


def test_a_longer_span_scores_more_tokens(scorer):
    text = SENTENCES[1]
    short, long = scorer.pseudo_loglikelihood([Request(text, 0, 5), whole(text)])
    assert long.n_tokens > short.n_tokens


def test_progress_counts_requests(scorer):
    progress = Progress()
    scorer.pseudo_loglikelihood([whole(s) for s in SENTENCES], progress=progress)
    assert progress.done == len(SENTENCES)


def test_duplicates_get_the_same_score(scorer):
    a, b = scorer.pseudo_loglikelihood([whole(SENTENCES[2], 4), whole(SENTENCES[2], 4)])
    assert a.n_tokens == b.n_tokens
    assert_model_close(b.logprob, a.logprob, what="a duplicate's PLL")
