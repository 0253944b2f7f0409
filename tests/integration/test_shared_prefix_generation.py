"""Generation over shared prompt prefixes gives model.generate's greedy replies, running each shared stretch once."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

pytest.importorskip("torch")

from culturebias.adapters.hf.shared_prefill import radix_nodes  # noqa: E402
from culturebias.domain.run_plan import trie_nodes  # noqa: E402
from culturebias.domain.requests import ChatMessage, GenerationParams, GenerationRequest  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "culturebias-test-cache"


def bbq_requests(templater, kobbq_items: int = 1, cbbq_items: int = 2, params: GenerationParams | None = None):
    """KoBBQ's five prompts × three option orders and CBBQ's prompt × three orders, rendered as the services do."""
    from culturebias.adapters.cbbq.files import CBBQFiles
    from culturebias.adapters.kobbq.files import KoBBQFiles
    from culturebias.application.cbbq.service import CBBQService
    from culturebias.application.kobbq.service import KoBBQService
    from culturebias.domain.cbbq.options import CBBQOptions
    from culturebias.domain.kobbq.options import KoBBQOptions

    kobbq = KoBBQFiles(None).load()
    cbbq = CBBQFiles(None).load()
    step = len(kobbq.items) // kobbq_items
    questions = KoBBQService(KoBBQOptions()).questions(kobbq.items[::step][:kobbq_items], kobbq)
    step = len(cbbq.items) // cbbq_items
    questions += CBBQService(CBBQOptions(permutations=[0, 1, 2])).questions(cbbq.items[::step][:cbbq_items])
    params = params or GenerationParams(max_new_tokens=12)
    return [GenerationRequest.chat([ChatMessage("user", q.turns[0])], params) for q in questions]


def generate(backend, requests):
    generator = backend.generator()
    return [r.text for r in generator.generate(requests)], generator.prompt_tokens_run


def hf(arch: str, batch_size: int, prefix_cache: bool):
    from culturebias.adapters.hf.backend import create_backend
    from culturebias.adapters.hf.options import HFOptions

    path = cached_tiny_causal_lm(arch=arch)
    return create_backend(HFOptions(path=str(path), batch_size=batch_size, prefix_cache=prefix_cache, shared_generation=prefix_cache), CACHE)


def test_radix_nodes_hold_each_shared_stretch_once_and_end_every_prompt():
    prompts = [[1, 2, 3, 4], [1, 2, 3, 5, 6], [1, 2], [7, 8], [1, 2, 3, 5, 9]]
    nodes = radix_nodes(prompts)
    assert sorted(node.tokens for node in nodes) == [(1, 2), (3,), (4,), (5,), (6,), (7, 8), (9,)]
    assert trie_nodes(prompts) == 9
    ended = sorted(p for node in nodes for p in node.ends)
    assert ended == [0, 1, 2, 3, 4]
    for node in nodes:  # parents come first, one level up
        assert node.parent < 0 and node.level == 0 or nodes[node.parent].level == node.level - 1


@pytest.mark.parametrize(("arch", "batch_size"), [("llama", 4), ("gpt2", 64)])
def test_shared_prefixes_give_the_replies_of_whole_prompts(arch, batch_size):
    shared, whole = hf(arch, batch_size, True), hf(arch, batch_size, False)
    requests = bbq_requests(shared.templater())
    stops = GenerationParams(max_new_tokens=12, stop=("A", "\n"))
    requests += bbq_requests(shared.templater(), 1, 1, stops)
    new, run = generate(shared, requests)
    old, run_whole = generate(whole, requests)
    assert new == old
    assert any(new) and len(set(new)) > 1  # real, varied replies (the test would pass on empty ones)
    assert run < 0.7 * run_whole  # BBQ prompts share most of their tokens, even in batches of 4


def test_one_batch_runs_exactly_the_distinct_tokens_without_a_pass_cost_and_nearly_with_one(monkeypatch):
    from culturebias.adapters.hf import buffered_generation

    backend = hf("llama", 64, True)
    requests = bbq_requests(backend.templater(), 1, 2)
    generator = backend.generator()
    prompts = [generator._encode(*generator.render(r)) for r in requests]
    merged, run_merged = generate(backend, requests)
    monkeypatch.setattr(buffered_generation, "PASS_TOKENS", 0)
    exact, run = generate(backend, requests)
    run -= run_merged  # the generator counts across calls
    assert run == trie_nodes(prompts) < sum(len(p) for p in prompts)
    assert merged == exact and run <= run_merged <= 1.15 * run


def test_sampled_requests_keep_whole_prompts():
    shared = hf("llama", 4, True)
    sampled = GenerationParams(max_new_tokens=6, temperature=0.8, seed=3, strategy="sample")
    requests = bbq_requests(shared.templater(), 1, 1, sampled)
    generator = shared.generator()
    prompts = [generator._encode(*generator.render(r)) for r in requests]
    _, run = generate(shared, requests)
    assert run == sum(len(p) for p in prompts)


def test_onnx_generation_shares_prefixes_with_the_same_replies():
    pytest.importorskip("onnxruntime")
    from culturebias.adapters.onnx.backend import create_backend
    from culturebias.adapters.onnx.options import OnnxOptions

    path = str(cached_tiny_causal_lm(arch="llama"))
    backends = [
        create_backend(OnnxOptions(backend="onnx", path=path, device="cpu", batch_size=6, prefix_cache=flag, shared_generation=flag), CACHE)
        for flag in (True, False)
    ]
    requests = bbq_requests(backends[0].templater(), 1, 2)
    (new, run), (old, run_whole) = (generate(b, requests) for b in backends)
    assert new == old and any(new)
    assert run < run_whole / 2


@pytest.mark.slow
def test_smollm2_kobbq_and_cbbq_replies_are_byte_identical(smollm2_installed, user_cache_dir):
    from culturebias.adapters.hf.backend import create_backend
    from culturebias.adapters.hf.options import HFOptions

    shared = create_backend(HFOptions(batch_size=8, shared_generation=True), user_cache_dir)  # the embedded SmolLM2-135M-Instruct
    whole = create_backend(HFOptions(batch_size=8, prefix_cache=False), user_cache_dir)
    requests = bbq_requests(shared.templater(), 1, 2, GenerationParams(max_new_tokens=32))  # the services' answer budget
    new, run = generate(shared, requests)
    old, run_whole = generate(whole, requests)
    assert [a.encode() for a in new] == [b.encode() for b in old]
    assert len(set(new)) > 1
    assert run < 0.6 * run_whole


def test_generation_shares_prefixes_by_default_and_an_option_turns_it_off():
    """On by default: the same replies as model.generate on whole prompts with fewer prompt tokens run."""
    from culturebias.adapters.hf.backend import create_backend
    from culturebias.adapters.hf.options import HFOptions

    path = str(cached_tiny_causal_lm(arch="llama"))
    default = create_backend(HFOptions(path=path, batch_size=4), CACHE)
    off = create_backend(HFOptions(path=path, batch_size=4, shared_generation=False), CACHE)
    requests = bbq_requests(default.templater(), 1, 2)
    (new, run_default), (old, run_off) = generate(default, requests), generate(off, requests)
    assert old == new and run_default < run_off


def test_a_sliding_window_model_falls_back_to_whole_prompts_logged_once():
    """Sliding-window attention cannot take the shared path's custom masks: model.generate, same replies, one log line."""
    from culturebias.adapters.hf import generator as generator_module
    from structlog.testing import capture_logs

    from culturebias.adapters.hf.backend import create_backend
    from culturebias.adapters.hf.generator import HFGenerator
    from culturebias.adapters.hf.options import HFOptions

    path = str(cached_tiny_causal_lm(arch="mistral", seed=3))
    generator_module._FELL_BACK.clear()
    default = create_backend(HFOptions(path=path, batch_size=4), CACHE)
    off = create_backend(HFOptions(path=path, batch_size=4, shared_generation=False), CACHE)
    requests = bbq_requests(default.templater(), 1, 1)
    with capture_logs() as logs:
        first = default.generator()
        (new, run_default), (old, run_off) = generate(default, requests), generate(off, requests)
        HFGenerator(default.loaded(), HFOptions(path=path, batch_size=4), default.templater())  # a second one: no second line
    prompts = [first._encode(*first.render(r)) for r in requests]
    assert max(len(p) for p in prompts) > 48  # prompts reach past the window
    assert new == old and any(new)
    assert run_default == run_off == sum(len(p) for p in prompts)
    lines = [e for e in logs if "shared-prefix generation does not apply" in e.get("event", "")]
    assert len(lines) == 1 and lines[0]["reason"] == "sliding-window attention"
