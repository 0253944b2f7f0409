"""The hf generator on a tiny random model: greedy output is what the scorer calls greedy."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("torch")

from culturebias.adapters.hf.backend import create_backend  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402
from culturebias.adapters.hf.options import HFOptions  # noqa: E402
from culturebias.domain.requests import (  # noqa: E402
    ChatMessage,
    GenerationParams,
    GenerationRequest,
    LoglikelihoodRequest,
)

CACHE = Path(tempfile.gettempdir()) / "culturebias-test-cache"


@functools.lru_cache(maxsize=None)
def backend(arch: str = "llama", batch_size: int = 4, chat_template: str = "auto"):
    path = cached_tiny_causal_lm(arch=arch)
    return create_backend(HFOptions(path=str(path), batch_size=batch_size, chat_template=chat_template), CACHE)


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_greedy_generation_scores_as_greedy(arch):
    hf = backend(arch)
    prompts = ["男生收入高", "The answer is", "다음 문장을"]
    params = GenerationParams(max_new_tokens=6)
    texts = [r.text for r in hf.generator().generate([GenerationRequest(prompt=p, params=params) for p in prompts])]
    scored = hf.scorer().loglikelihood([LoglikelihoodRequest(p, t) for p, t in zip(prompts, texts)])
    for text, result in zip(texts, scored):
        if "\ufffd" in text or not text:
            continue  # a cut multi-byte character does not re-tokenise to the generated ids
        assert result.is_greedy, text


def test_chat_requests_use_the_template_and_return_only_new_text():
    hf = backend()
    messages = [ChatMessage("user", "你想說什麼？")]
    params = GenerationParams(max_new_tokens=5)
    via_chat = hf.generator().generate([GenerationRequest.chat(messages, params)])[0].text
    rendered = hf.templater().render(messages)
    via_prompt = hf.generator().generate([GenerationRequest(prompt=rendered, params=params)])[0].text
    assert via_chat == via_prompt  # a rendered prompt that starts with BOS gets no second BOS
    assert "<|im_start|>" not in via_chat and "你想說什麼" not in via_chat


def test_shorter_budget_gives_a_prefix_of_the_longer_greedy_text():
    hf = backend()
    short, long = hf.generator().generate(
        [
            GenerationRequest(prompt="The answer is", params=GenerationParams(max_new_tokens=3)),
            GenerationRequest(prompt="The answer is", params=GenerationParams(max_new_tokens=12)),
        ]
    )
    assert long.text.startswith(short.text.rstrip("\ufffd"))
    assert len(short.text) < len(long.text)


def test_left_padding_does_not_change_greedy_output():
    prompts = ["問題：", "男人應該負責養家，女人應該負責家務。", "The quick brown fox"]
    requests = [GenerationRequest(prompt=p, params=GenerationParams(max_new_tokens=8)) for p in prompts]
    alone = [backend(batch_size=1).generator().generate([r])[0].text for r in requests]
    together = [r.text for r in backend(batch_size=3).generator().generate(requests)]
    assert alone == together


def test_sampling_is_seeded():
    hf = backend()
    request = lambda seed: GenerationRequest(  # noqa: E731
        prompt="The answer is", params=GenerationParams(max_new_tokens=10, temperature=1.5, seed=seed)
    )
    a, b, c = hf.generator().generate([request(1), request(1), request(2)])
    assert a.text == b.text
    greedy = hf.generator().generate([GenerationRequest(prompt="The answer is", params=GenerationParams(max_new_tokens=10))])[0]
    assert len({a.text, c.text, greedy.text}) > 1  # a hot temperature on a random model wanders off


def test_without_a_template_messages_are_joined_as_plain_text():
    hf = backend(chat_template="none")
    params = GenerationParams(max_new_tokens=4)
    via_chat = hf.generator().generate([GenerationRequest.chat([ChatMessage("user", "問題：")], params)])[0].text
    via_prompt = hf.generator().generate([GenerationRequest(prompt="問題：\n\n", params=params)])[0].text
    assert via_chat == via_prompt
