"""The buffered shared-prefix generator: chunk cuts, prompt-lookup drafts, and replies that do not depend on them."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from culturebias.adapters.hf.buffered_generation import branch_points, buffered_greedy_generate, prompt_lookup  # noqa: E402
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
        plain, run = buffered_greedy_generate(model, prompts, 16, [0], 0, torch.device("cpu"), draft=0, chunk=1000)
        drafted, run_drafted = buffered_greedy_generate(model, prompts, 16, [0], 0, torch.device("cpu"), draft=6, chunk=7)
        whole = model.generate(
            input_ids=torch.tensor([prompts[0]]), attention_mask=torch.ones(1, len(prompts[0]), dtype=torch.long),
            max_new_tokens=16, do_sample=False, pad_token_id=0, eos_token_id=[0],
        )
    assert drafted == plain and all(len(r) == 16 for r in plain) and len({tuple(r) for r in plain}) > 1
    assert plain[0] == whole[0, len(prompts[0]) :].tolist()
    assert run == run_drafted == 40 + 3 + 9 + 9 + 20 + 4 * 12
