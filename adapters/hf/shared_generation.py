"""Greedy generation over prompts prefilled with their shared prefixes (``shared_prefill``).

Batches hold prompts that share prefixes: runs of the prompts sorted by their tokens,
cut where the fewest distinct tokens run (``shared_batches``). A batch is prefilled
once per distinct stretch, then decoded greedily one token per step on the batch's
cache, with transformers' own stop criteria (end-of-sequence ids, stop strings over
prompt and reply tokens); finished rows leave the batch.

The replies are those of ``model.generate`` on the whole prompts (greedy, left
padding): every token sees the same real tokens at the same positions, and padding
and the cache's holes are masked out. Only float rounding differs (other matrix
shapes), as between two batchings of ``model.generate`` itself.
"""

from __future__ import annotations

from typing import Any, Sequence

from culturebias.adapters.hf.prefix_tree import common_prefix_length
from culturebias.adapters.hf.shared_prefill import Forward, as_cache, cache_argument, cache_layers, output_cache, prefill


# What one more batch costs beyond its tokens, in prompt tokens (its decoding passes, a prefill pass or two).
BATCH_TOKENS = 256


def shared_batches(members: Sequence[int], encoded: Sequence[Sequence[int]], batch_size: int) -> list[list[int]]:
    """``members`` in batches of at most ``batch_size`` whose prompts share prefixes.

    The prompts sorted by their tokens share the most with their neighbours; batches are runs of that order,
    cut where the fewest distinct tokens are run in all (a batch runs the trie of its prompts: every prompt's
    length less what it shares with the one before it) plus ``BATCH_TOKENS`` per batch. So an instruction
    that twelve prompts share is not cut between two batches when a cut between two instructions costs the
    same number of batches. Longest batches first.
    """
    ordered = sorted(members, key=lambda i: tuple(encoded[i]))
    if not ordered:
        return []
    shared = [0] + [common_prefix_length([encoded[a], encoded[b]]) for a, b in zip(ordered, ordered[1:])]
    lengths = [len(encoded[i]) for i in ordered]
    total = [0]
    for k, length in enumerate(lengths):  # total[j] - total[i] - shared[i] = distinct tokens of ordered[i:j]
        total.append(total[-1] + length - shared[k])
    best = [0] + [float("inf")] * len(ordered)
    back = [0] * (len(ordered) + 1)
    for j in range(1, len(ordered) + 1):
        for i in range(max(0, j - max(1, batch_size)), j):
            cost = best[i] + BATCH_TOKENS + total[j] - total[i] + shared[i]
            if cost < best[j]:
                best[j], back[j] = cost, i
    batches, j = [], len(ordered)
    while j > 0:
        batches.append(ordered[back[j] : j])
        j = back[j]
    batches.sort(key=lambda batch: max(len(encoded[i]) for i in batch), reverse=True)
    return batches


def model_forward(model: Any) -> Forward:  # Any: a transformers model (transformers is read as Any)
    """A ``shared_prefill`` forward over a transformers causal LM (or the onnx facade): last-token logits."""
    name = cache_argument(model)

    def forward(input_ids, attention_mask, position_ids, past):
        output = model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            use_cache=True,
            logits_to_keep=1,
            **{name: as_cache(past)},
        )
        return cache_layers(output_cache(output)), output.logits[:, -1, :]

    return forward


def greedy_generate(
    model: Any,  # Any: a transformers model (transformers is read as Any)
    prompts: Sequence[Sequence[int]],
    max_new_tokens: int,
    eos_ids: Sequence[int],
    pad_id: int,
    device: Any,  # Any: a torch device (torch is read as Any)
    stop_criteria: Any = None,  # Any: transformers StoppingCriteria (transformers is read as Any)
) -> tuple[list[list[int]], int]:
    """Greedy new tokens of each prompt (up to and including a stop), and the prompt tokens the model ran."""
    import torch

    forward = model_forward(model)
    name = cache_argument(model)
    filled = prefill(prompts, forward, pad_id, device)
    layers, mask, lengths = filled.layers, filled.mask, filled.lengths
    logits = filled.logits
    count = len(prompts)
    replies: list[list[int]] = [[] for _ in range(count)]
    active = list(range(count))
    eos = torch.tensor(list(eos_ids), dtype=torch.long, device=device)
    for step in range(max_new_tokens):
        # transformers' greedy step: the float32 argmax of the last position's logits.
        chosen = logits.float().argmax(dim=-1)
        for row, token in zip(active, chosen.tolist()):
            replies[row].append(token)
        done = torch.isin(chosen, eos)
        if stop_criteria is not None:
            done |= stop_criteria(sequences_so_far(prompts, replies, active, pad_id, device), logits).to(device)
        if step == max_new_tokens - 1 or bool(done.all()):
            break
        keep = (~done).nonzero().flatten()
        if len(keep) < len(active):
            active = [active[k] for k in keep.tolist()]
            layers = [(k.index_select(0, keep), v.index_select(0, keep)) for k, v in layers]
            mask, lengths, chosen = mask.index_select(0, keep), lengths.index_select(0, keep), chosen.index_select(0, keep)
        mask = torch.cat([mask, torch.ones((len(active), 1), dtype=mask.dtype, device=device)], dim=1)
        output = model(
            input_ids=chosen[:, None],
            attention_mask=mask,
            position_ids=(lengths + step)[:, None],
            use_cache=True,
            logits_to_keep=1,
            **{name: as_cache(layers)},
        )
        layers, logits = cache_layers(output_cache(output)), output.logits[:, -1, :]
    return replies, filled.tokens_run


def sequences_so_far(prompts, replies, active, pad_id: int, device: Any):  # Any: a torch device (torch is read as Any)
    """Prompt + reply tokens of the active rows, left-padded (what stop criteria read in ``generate``)."""
    import torch

    rows = [list(prompts[r]) + replies[r] for r in active]
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    for k, row in enumerate(rows):
        ids[k, width - len(row) :] = torch.tensor(row, dtype=torch.long)
    return ids.to(device)
