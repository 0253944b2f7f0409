"""Contract of the Generator port (PROTOCOLS §0.3), for every adapter in culturebias.testing.backend_factories.GENERATORS.

A plugin runs it on its own generator by importing this module's tests and overriding ``make``: a fixture
giving ``factory(batch_size=...)`` that builds the generator.
"""

from __future__ import annotations

import dataclasses

import pytest

from culturebias.adapters.progress.reporters import NullTask
from culturebias.domain.identity import ModelIdentity
from culturebias.domain.requests import ChatMessage, GenerationParams, GenerationRequest, GenerationResult
from culturebias.ports.generation import Generator
from culturebias.testing import backend_factories


ADAPTERS = sorted(backend_factories.GENERATORS)
key = backend_factories.contract_key  # every request names its question, so answers made elsewhere (replay) can be looked up
SHORT = GenerationParams(max_new_tokens=12)
REQUESTS = [
    GenerationRequest(prompt="The answer is", params=SHORT, key=key(0)),
    GenerationRequest.chat([ChatMessage("user", "你想說什麼？")], SHORT, key=key(1)),
    GenerationRequest.chat([ChatMessage("system", "簡短回答。"), ChatMessage("user", "男生收入高嗎？")], SHORT, key=key(2)),
    GenerationRequest(prompt="다음 문장을 읽고 질문에 답하세요.", params=GenerationParams(max_new_tokens=4), key=key(3)),
    GenerationRequest(prompt="問題：", params=SHORT, key=key(4)),
]


@pytest.fixture(params=ADAPTERS)
def make(request):
    return backend_factories.GENERATORS[request.param]


def test_is_a_generator_with_identity(make):
    generator = make()
    assert isinstance(generator, Generator)
    assert isinstance(generator.identity, ModelIdentity) and generator.identity.backend


def test_one_text_per_request_in_order(make):
    generator = make()
    forward = generator.generate(REQUESTS)
    backward = generator.generate(REQUESTS[::-1])
    assert len(forward) == len(REQUESTS)
    assert all(isinstance(r, GenerationResult) and isinstance(r.text, str) for r in forward)
    assert [r.text for r in forward] == [r.text for r in backward[::-1]]


def test_greedy_is_deterministic_and_independent_of_batch_size(make):
    first = [r.text for r in make(batch_size=1).generate(REQUESTS)]
    again = [r.text for r in make(batch_size=1).generate(REQUESTS)]
    batched = [r.text for r in make(batch_size=4).generate(REQUESTS)]
    assert first == again == batched


def test_duplicates_give_equal_texts_and_progress_counts_every_request(make):
    requests = [REQUESTS[0], REQUESTS[1], REQUESTS[0]]
    task = NullTask()
    results = make(batch_size=2).generate(requests, progress=task)
    assert task.done == len(requests)
    assert results[0].text == results[2].text


def test_no_requests_no_results(make):
    assert make().generate([]) == []


def test_text_is_cut_before_the_first_stop_string(make):
    generator = make()
    free = generator.generate([REQUESTS[0]])[0].text
    # A stop string taken from the unconstrained greedy output itself.
    candidates = [c for c in free[1:] if c.strip() and c != "\ufffd"]
    if not candidates:
        pytest.skip("the greedy output has no usable character to stop at")
    stop = candidates[len(candidates) // 2]
    params = GenerationParams(max_new_tokens=SHORT.max_new_tokens, stop=(stop,))
    cut = generator.generate([dataclasses.replace(REQUESTS[0], params=params)])[0].text
    assert cut == free[: free.index(stop)]
    assert stop not in cut


def test_seeded_sampling_repeats_itself(make):
    params = GenerationParams(max_new_tokens=8, temperature=0.9, top_p=0.9, seed=7)
    requests = [GenerationRequest(prompt="The answer is", params=params, key=key(5)), GenerationRequest(prompt="問題：", params=params, key=key(6))]
    first = [r.text for r in make().generate(requests)]
    second = [r.text for r in make().generate(requests)]
    assert first == second
