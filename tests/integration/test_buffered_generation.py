"""The buffered shared-prefix generator: chunk cuts, prompt-lookup drafts, and replies that do not depend on them."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from culturebias.adapters.hf.buffered_generation import branch_points, buffered_greedy_generate, plan_chunks, prompt_lookup  # noqa: E402
from culturebias.adapters.hf.shared_generation import shared_batches  # noqa: E402
from culturebias.domain.run_plan import trie_nodes  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402


def test_branch_points_are_where_prompts_sharing_a_prefix_part_or_end():
    prompts = [[1, 2, 3, 4], [1, 2, 3, 5, 6], [1, 2], [7, 8], [1, 2, 3, 5, 9]]
    assert branch_points(prompts) == {2, 3, 4}


def test_prompt_lookup_copies_what_followed_the_latest_earlier_ngram():
    assert prompt_lookup([5, 1, 2, 3, 9, 1, 2, 4, 7, 1, 2], 3) == [4, 7, 1]  # [1, 2] last seen before 4
    assert prompt_lookup([5, 1, 2, 3, 9, 8, 1, 2, 3], 2) == [9, 8]  # the 3-gram wins
    assert prompt_lookup([1, 2, 3], 4) == []
    assert prompt_lookup([1, 2, 1, 2], 0) == []


def test_drafts_and_chunk_sizes_leave_greedy_replies_unchanged():
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(cached_tiny_causal_lm(arch="llama")), attn_implementation="sdpa").eval()
    generator = torch.Generator().manual_seed(0)
    stem = torch.randint(5, 200, (40,), generator=generator).tolist()
    prompts = [stem + torch.randint(5, 200, (n,), generator=generator).tolist() + stem[:12] for n in (3, 9, 9, 20)]
    prompts.append(stem[:30])
    with torch.inference_mode():
        plain, run = buffered_greedy_generate(model, prompts, 16, [0], 0, torch.device("cpu"), draft=0, chunk=1000, pass_tokens=0)
        drafted, run_drafted = buffered_greedy_generate(model, prompts, 16, [0], 0, torch.device("cpu"), draft=6, chunk=7, pass_tokens=0)
        merged, run_merged = buffered_greedy_generate(model, prompts, 16, [0], 0, torch.device("cpu"), draft=3, pass_tokens=10_000)
        whole = model.generate(
            input_ids=torch.tensor([prompts[0]]), attention_mask=torch.ones(1, len(prompts[0]), dtype=torch.long),
            max_new_tokens=16, do_sample=False, pad_token_id=0, eos_token_id=[0],
        )
    assert drafted == plain == merged and all(len(r) == 16 for r in plain) and len({tuple(r) for r in plain}) > 1
    assert run_merged == sum(len(p) for p in prompts)  # one pass: every distinct prompt whole (these share no suffix)
    assert plain[0] == whole[0, len(prompts[0]) :].tolist()
    assert run == run_drafted == 40 + 3 + 9 + 9 + 20 + 4 * 12


def _tokens_run(prompts, plan):
    """Tokens a plan's passes run: one row per distinct prefix up to the pass's end, among prompts reaching its start."""
    return sum(min(len(q), end) - start for start, end in plan for q in {tuple(p[:end]) for p in prompts if len(p) > start})


def test_chunk_plans_merge_small_passes_and_run_each_stretch_once_without_a_pass_cost():
    stem = list(range(10, 70))
    prompts = [stem + [1, 2, 3] + [k] * 30 for k in (4, 5)] + [stem + [1, 2, 9] + [6] * 30, stem[:50]]
    exact = plan_chunks(prompts, chunk=512, pass_tokens=0)
    merged = plan_chunks(prompts, chunk=512, pass_tokens=48)
    assert exact == [(0, 50), (50, 62), (62, 63), (63, 93)]  # every branch point
    assert _tokens_run(prompts, exact) == trie_nodes(prompts)
    assert len(merged) < len(exact) and _tokens_run(prompts, merged) <= trie_nodes(prompts) + 48 * (len(exact) - len(merged))
    assert all(end - start <= 20 for start, end in plan_chunks(prompts, chunk=20, pass_tokens=48))
    assert plan_chunks(prompts, chunk=512, pass_tokens=10_000) == [(0, 93)]


def test_batches_are_cut_between_instructions_rather_than_inside_one():
    """Twelve prompts under each of two instructions, batches of 16: 12 + 12, not 16 + 8, so each instruction runs once."""
    first, second = list(range(100, 140)), list(range(200, 240))
    encoded = [head + [k, k + 1] for head in (first, second) for k in range(12)]
    batches = shared_batches(range(24), encoded, 16)
    assert sorted(len(b) for b in batches) == [12, 12]
    assert sum(trie_nodes([encoded[i] for i in b]) for b in batches) == trie_nodes(encoded)
