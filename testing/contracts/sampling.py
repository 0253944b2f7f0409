"""Sampling (model.sampling) through every generator adapter: seeded, and a reply independent of its batch.

A plugin runs it on its own generator as the generator suite: by overriding ``make``.
"""

from __future__ import annotations

import pytest

from culturebias.domain.requests import GenerationRequest
from culturebias.domain.sampling import SamplingSettings
from culturebias.testing import backend_factories

key = backend_factories.contract_key
PROMPTS = ["The answer is", "男生收入高嗎？", "다음 문장을 읽고", "問題：", "The doctor said"]


@pytest.fixture(params=sorted(backend_factories.GENERATORS))
def make(request):
    return backend_factories.GENERATORS[request.param]


def _requests(seed: int) -> list[GenerationRequest]:
    params = SamplingSettings(temperature=1.3, top_p=0.95).params(8, seed=seed)
    return [GenerationRequest(prompt=p, params=params, key=key(n)) for n, p in enumerate(PROMPTS)]


def test_a_sampled_reply_does_not_depend_on_the_rest_of_its_batch(make):
    requests = _requests(seed=3)
    alone = [make(batch_size=1).generate([r])[0].text for r in requests]
    together = [r.text for r in make(batch_size=4).generate(requests)]
    reversed_order = [r.text for r in make(batch_size=2).generate(requests[::-1])][::-1]
    assert alone == together == reversed_order
