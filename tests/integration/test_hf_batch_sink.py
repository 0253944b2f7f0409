"""The hf ports deliver results batch by batch, and skip the batches whose results are known.

A resumed chunk is planned from all of its requests as before, so the batches
left to run, and therefore every score, are those of an uninterrupted call.
"""

from __future__ import annotations

from typing import Any, Mapping

import pytest

pytest.importorskip("torch")

from culturebias.adapters.hf.backend import create_backend  # noqa: E402
from culturebias.adapters.hf.masked import HFMaskedScorer  # noqa: E402
from culturebias.adapters.hf.options import HFOptions  # noqa: E402
from culturebias.domain.requests import (  # noqa: E402
    GenerationParams,
    GenerationRequest,
    LoglikelihoodRequest,
    PseudoLoglikelihoodRequest,
)
from culturebias.ports.recording import BatchSink  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm, cached_tiny_masked_lm  # noqa: E402


class Sink:
    def __init__(self, known: Mapping[int, Any] | None = None):
        self._known = dict(known or {})
        self.batches: list[dict[int, Any]] = []
        self.advanced = 0

    def advance(self, n: int = 1) -> None:
        self.advanced += n

    def close(self) -> None:
        pass

    def known(self, index: int) -> Any | None:
        return self._known.get(index)

    def deliver(self, results: Mapping[int, Any]) -> None:
        self.batches.append(dict(results))


def delivered(sink: Sink) -> dict[int, Any]:
    return {i: r for batch in sink.batches for i, r in batch.items()}


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    return create_backend(HFOptions(path=str(cached_tiny_causal_lm()), batch_size=2, device="cpu"), tmp_path_factory.mktemp("cache"))


def scoring_requests(templater) -> list[LoglikelihoodRequest]:
    contexts = ["Q: which one? A:", "Another question entirely, answer:", "Short:", "Fourth:", "A fifth context, longer:", "6:", "Seven?"]
    answers = [" yes", " no", " maybe so", " a much longer answer than the others", " x"]
    lone = [LoglikelihoodRequest("", "a sentence alone"), LoglikelihoodRequest("Only one here:", " fine")]
    return [LoglikelihoodRequest(c, a) for c in contexts for a in answers] + lone


@pytest.mark.parametrize("prefix_cache", [True, False])
@pytest.mark.parametrize("done_batches", [1, 3])
def test_the_scorer_skips_known_batches_and_scores_the_rest_identically(backend, prefix_cache, done_batches):
    from culturebias.adapters.hf.scorer import HFScorer

    scorer = HFScorer(backend.loaded(), backend.options.model_copy(update={"prefix_cache": prefix_cache}))
    requests = scoring_requests(backend.templater())
    full_sink = Sink()
    assert isinstance(full_sink, BatchSink)
    full = scorer.loglikelihood(requests, progress=full_sink)
    assert delivered(full_sink) == dict(enumerate(full)), "every result is delivered, once"
    assert len(full_sink.batches) > done_batches + 1

    known = {i: r for batch in full_sink.batches[:done_batches] for i, r in batch.items()}
    resumed_sink = Sink(known)
    resumed = scorer.loglikelihood(requests, progress=resumed_sink)
    assert resumed == full, "known results are used, and the rest are scored exactly as before"
    assert resumed_sink.batches == full_sink.batches[done_batches:], "only the batches not yet done run, as planned"
    assert resumed_sink.advanced == len(requests) - len(known)


def test_the_generator_skips_known_batches(backend):
    generator = backend.generator()
    params = GenerationParams(max_new_tokens=3)
    requests = [GenerationRequest(prompt=f"Count to {n}:", params=params) for n in range(7)]
    full_sink = Sink()
    full = generator.generate(requests, progress=full_sink)
    known = full_sink.batches[0]
    resumed_sink = Sink(known)
    assert generator.generate(requests, progress=resumed_sink) == full
    assert resumed_sink.batches == full_sink.batches[1:]


def test_the_masked_scorer_skips_known_passes(tmp_path):
    scorer = HFMaskedScorer(HFOptions(path=str(cached_tiny_masked_lm()), kind="masked", batch_size=2, device="cpu"), tmp_path)
    texts = ["the cat sat on the mat", "a dog", "one two three four five six seven", "short", "x y z"]
    requests = [PseudoLoglikelihoodRequest(t, 0, len(t)) for t in texts]
    full_sink = Sink()
    full = scorer.pseudo_loglikelihood(requests, progress=full_sink)
    assert delivered(full_sink) == dict(enumerate(full))
    known = full_sink.batches[0]
    resumed_sink = Sink(known)
    assert scorer.pseudo_loglikelihood(requests, progress=resumed_sink) == full
    assert resumed_sink.batches == full_sink.batches[1:]
