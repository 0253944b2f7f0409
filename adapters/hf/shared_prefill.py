"""Prefilling prompts that share prefixes: every distinct stretch of tokens runs through the model once.

The prompts of a batch form a radix tree (``radix_nodes``): each node holds a run
of tokens that a set of prompts shares and nothing else in the batch continues
differently. The tree runs level by level, a level's nodes as one batch: a node's
tokens are left-padded to the level's longest run and continue the key/value cache
of its parent node (gathered per row), with attention masks that hide the padding
and position ids that count only real tokens. A prompt's cache is that of the
node where it ends, so the three option orders of a BBQ item run their shared
instruction, context and question once, and items under one prompt share the
instruction.

The caches come back as one batch, right-aligned (zero-filled, masked columns on
the left), with each prompt's real length and, when asked for, the logits its last
token predicts. Works with any model whose forward takes ``past_key_values``,
a 2-D ``attention_mask`` with holes and ``position_ids`` (transformers' decoders
under sdpa/eager attention, the onnx facade).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from culturebias.adapters.hf.prefix_tree import common_prefix_length

# (input_ids, attention_mask, position_ids, past layers or None) -> (layers [(keys, values)], last logits or None)
Forward = Callable[..., tuple[list[tuple[Any, Any]], Any]]


@dataclass
class RadixNode:
    tokens: tuple[int, ...]
    parent: int  # index of the parent node, -1 for a root child
    level: int
    ends: list[int] = field(default_factory=list)  # prompts that end with this node


@dataclass
class Prefilled:
    layers: list[tuple[Any, Any]]  # per layer (keys, values) [prompts, heads, width, dim], right-aligned
    mask: Any  # [prompts, width] long: 1 on real columns
    lengths: Any  # [prompts] long: real tokens per prompt
    logits: Any  # [prompts, vocab] predicted by each prompt's last token, or None
    tokens_run: int  # tokens that went through the model (real ones, padding excluded)


def radix_nodes(prompts: Sequence[Sequence[int]]) -> list[RadixNode]:
    """The radix tree of ``prompts`` (non-empty token sequences), parents before children."""
    nodes: list[RadixNode] = []
    stack: list[tuple[list[int], int, int, int]] = [(list(range(len(prompts))), 0, -1, 0)]
    while stack:
        members, offset, parent, level = stack.pop()
        by_token: dict[int, list[int]] = defaultdict(list)
        for i in members:
            if len(prompts[i]) > offset:
                by_token[prompts[i][offset]].append(i)
        for group in by_token.values():
            n = common_prefix_length([prompts[i][offset:] for i in group])
            ends = [i for i in group if len(prompts[i]) == offset + n]
            nodes.append(RadixNode(tuple(prompts[group[0]][offset : offset + n]), parent, level, ends))
            rest = [i for i in group if len(prompts[i]) > offset + n]
            if rest:
                stack.append((rest, offset + n, len(nodes) - 1, level + 1))
    return nodes


def prefill(prompts: Sequence[Sequence[int]], forward: Forward, pad_id: int, device: Any) -> Prefilled:  # Any: a torch device (torch is read as Any)
    """The key/value caches of ``prompts``, each shared stretch computed once (module docstring)."""
    import torch

    nodes = radix_nodes(prompts)
    levels: dict[int, list[int]] = defaultdict(list)
    for index, node in enumerate(nodes):
        levels[node.level].append(index)
    row_of: dict[int, int] = {}
    previous: tuple[list[tuple[Any, Any]], Any, Any] | None = None  # Any: torch tensors (torch is read as Any)
    finished: list[tuple[list[int], list[tuple[Any, Any]], Any, Any, Any]] = []  # Any: torch tensors (torch is read as Any)
    tokens_run = 0
    for level in sorted(levels):
        members = levels[level]
        width = max(len(nodes[n].tokens) for n in members)
        ids = torch.full((len(members), width), pad_id, dtype=torch.long)
        own = torch.zeros((len(members), width), dtype=torch.long)
        for row, n in enumerate(members):  # left padding: every run ends at the last column
            run = nodes[n].tokens
            ids[row, width - len(run) :] = torch.tensor(run, dtype=torch.long)
            own[row, width - len(run) :] = 1
            row_of[n] = row
            tokens_run += len(run)
        ids, own = ids.to(device), own.to(device)
        if previous is None:
            past, mask, before = None, own, torch.zeros(len(members), dtype=torch.long, device=device)
        else:
            select = torch.tensor([row_of[nodes[n].parent] for n in members], dtype=torch.long, device=device)
            layers, parent_mask, parent_lengths = previous
            past = [(k.index_select(0, select), v.index_select(0, select)) for k, v in layers]
            mask = torch.cat([parent_mask.index_select(0, select), own], dim=1)
            before = parent_lengths.index_select(0, select)
        positions = before[:, None] + (own.cumsum(dim=1) - 1).clamp(min=0)
        layers, logits = forward(input_ids=ids, attention_mask=mask, position_ids=positions, past=past)
        lengths = before + own.sum(dim=1)
        previous = (layers, mask, lengths)
        ending = [(p, row) for row, n in enumerate(members) for p in nodes[n].ends]
        if ending:
            rows = torch.tensor([row for _, row in ending], dtype=torch.long, device=device)
            finished.append(
                (
                    [p for p, _ in ending],
                    [(k.index_select(0, rows), v.index_select(0, rows)) for k, v in layers],
                    mask.index_select(0, rows),
                    lengths.index_select(0, rows),
                    None if logits is None else logits.index_select(0, rows),
                )
            )
    return _assemble(finished, len(prompts), tokens_run)


def _assemble(finished, count: int, tokens_run: int) -> Prefilled:
    """One right-aligned batch from the caches of the levels where prompts end, in prompt order."""
    import torch

    width = max(mask.shape[1] for _, _, mask, _, _ in finished)

    def left_pad(t, dim: int):
        missing = width - t.shape[dim]
        if missing == 0:
            return t
        shape = list(t.shape)
        shape[dim] = missing
        return torch.cat([torch.zeros(shape, dtype=t.dtype, device=t.device), t], dim=dim)

    order = [p for prompts, *_ in finished for p in prompts]
    inverse = torch.empty(count, dtype=torch.long)
    inverse[torch.tensor(order, dtype=torch.long)] = torch.arange(count)
    device = finished[0][2].device
    inverse = inverse.to(device)
    n_layers = len(finished[0][1])
    layers = []
    for layer in range(n_layers):
        keys = torch.cat([left_pad(f[1][layer][0], 2) for f in finished]).index_select(0, inverse)
        values = torch.cat([left_pad(f[1][layer][1], 2) for f in finished]).index_select(0, inverse)
        layers.append((keys, values))
    mask = torch.cat([left_pad(f[2], 1) for f in finished]).index_select(0, inverse)
    lengths = torch.cat([f[3] for f in finished]).index_select(0, inverse)
    logits = None
    if finished[0][4] is not None:
        logits = torch.cat([f[4] for f in finished]).index_select(0, inverse)
    return Prefilled(layers, mask, lengths, logits, tokens_run)


def cache_layers(cache: Any) -> list[tuple[Any, Any]]:  # Any: a transformers cache and its key/value tensors (read as Any)
    """(keys, values) per layer of a transformers cache."""
    return [(layer.keys, layer.values) for layer in cache.layers]


def as_cache(layers: Sequence[tuple[Any, Any]] | None) -> Any:  # Any: key/value tensors and a transformers cache (read as Any)
    """A transformers ``DynamicCache`` holding ``layers`` (None: no cache yet)."""
    if layers is None:
        return None
    from transformers import DynamicCache

    return DynamicCache(list(layers))


def additive_mask(visible: Any, dtype: Any) -> Any:  # Any: a boolean torch tensor and a torch dtype (torch is read as Any)
    """A boolean attention mask as eager attention adds it: 0 where visible, the dtype's minimum elsewhere."""
    import torch

    return torch.zeros(visible.shape, dtype=dtype, device=visible.device).masked_fill(~visible, torch.finfo(dtype).min)


def cache_argument(model: Any) -> str:  # Any: a transformers model (transformers is read as Any)
    """The name under which ``model``'s forward takes a key/value cache (``cache`` since transformers 5.2x)."""
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def output_cache(output: Any) -> Any:  # Any: a transformers model output and its cache (read as Any)
    """The key/value cache of a forward pass's output (transformers renamed the field in 5.2x)."""
    fields = getattr(output, "__dataclass_fields__", {})
    return getattr(output, "cache" if "cache" in fields else "past_key_values", None)
