"""Greedy generation over shared prompt prefixes on one preallocated key/value buffer (torch models).

Every prompt of a batch owns a row of a buffer ``[prompts, kv heads, longest prompt
+ new tokens, head dim]`` per layer, its token j at column j. The prompts run in
chunks of positions ``[start, end)`` cut at branch points (where prompts sharing all
earlier tokens part, or one ends): prompts whose tokens before ``end`` are the same
form one row of the chunk's forward pass (the option orders of a BBQ item until their
options differ, the instruction across items), its keys and values are written into
every member's buffer row, and it attends to one member's row, which holds the shared
past. Cut at every branch point, each distinct stretch runs exactly once (the prompts'
token-trie nodes), but in many small passes; ``plan_chunks`` skips the branch points
where a pass costs more than running the few tokens before them once per branch. A prompt that ends inside a
chunk is padded on the right: the padding is never seen by a real token and the
reply overwrites it.

Decoding then runs every unfinished prompt one token per step, writing in place
(no cache is rebuilt or concatenated) and attending to a view of the buffer;
finished rows leave the buffer when a quarter of it has finished. The attention
masks are 4-D (causal, each row up to its own length), so the model's forward
needs a custom-mask attention (sdpa or eager), as for ``shared_prefill``.

Replies are those of ``model.generate`` on the whole prompts: every token sees the
same real tokens at the same positions; only float rounding differs (other
matrix shapes), as between two batchings of ``model.generate`` itself.
"""

from __future__ import annotations

from typing import Any, Sequence

from culturebias.adapters.hf.prefix_tree import common_prefix_length
from culturebias.adapters.hf.shared_prefill import additive_mask, cache_argument

DRAFT_TOKENS = 8  # tokens guessed ahead per decoding pass (prompt lookup): replies often copy the prompt
CHUNK_TOKENS = 512  # positions per prefill pass at most (bounds the attention scores held at once)
# What a forward pass costs beyond its tokens, in tokens: on a CPU a pass over a few rows runs its matrix
# products several times slower per token than one over a hundred or more (perf/README.md, "The buffered generator").
PASS_TOKENS = 48


def prefix_sharing_obstacle(model: Any) -> str | None:  # Any: a transformers model (transformers is read as Any)
    """Why prompts may not share a key/value cache on this model (a sliding window, an attention that takes no
    custom 2-D masks with holes); None when they may."""
    config = model.config
    window = getattr(config, "sliding_window", None)
    if isinstance(window, int) and window > 0 or "sliding_attention" in (getattr(config, "layer_types", None) or ()):
        return "sliding-window attention"
    attention = getattr(config, "_attn_implementation", None)
    if getattr(model, "takes_custom_masks", False) or attention in ("sdpa", "eager"):
        return None
    return f"attention {attention!r} takes no custom masks"


def shares_prefixes(model: Any) -> bool:  # Any: a transformers model
    """Whether prompts may share a key/value cache (``prefix_sharing_obstacle`` names why not)."""
    return prefix_sharing_obstacle(model) is None


class _Write:
    """Where the pass being run writes its keys and values, and which part of the buffer it attends to."""

    def __init__(self, rows: Any, sources: Any, columns: Any, readers: Any, width: int):  # Any: torch index tensors / a slice
        self.rows, self.sources, self.columns, self.readers, self.width = rows, sources, columns, readers, width


def buffer_cache(count: int, width: int, layers: int, state: dict[str, Any]) -> Any:  # Any: a transformers Cache
    """A transformers ``Cache`` whose layers write into preallocated buffers as ``state["write"]`` says."""
    import torch
    from transformers.cache_utils import Cache, CacheLayerMixin

    class BufferLayer(CacheLayerMixin):
        is_sliding = False

        def lazy_initialization(self, key_states, value_states) -> None:
            heads, dim = key_states.shape[1], key_states.shape[3]
            shape = (count, heads, width, dim)
            # Zeros, not empty memory: a masked column's value is multiplied by a zero weight, and NaN * 0 is NaN.
            self.keys = torch.zeros(shape, dtype=key_states.dtype, device=key_states.device)
            self.values = torch.zeros(shape, dtype=value_states.dtype, device=value_states.device)
            self.is_initialized = True

        def update(self, key_states, value_states, *args: Any, **kwargs: Any):  # Any: transformers' extra arguments
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
            write: _Write = state["write"]
            for buffer, new in ((self.keys, key_states), (self.values, value_states)):
                if write.sources is None:
                    buffer[write.rows, :, write.columns] = new.transpose(1, 2)
                else:
                    buffer[write.rows, :, write.columns] = new.index_select(0, write.sources)
            if write.readers is None:
                return self.keys[:, :, : write.width], self.values[:, :, : write.width]
            return (
                self.keys[:, :, : write.width].index_select(0, write.readers),
                self.values[:, :, : write.width].index_select(0, write.readers),
            )

        def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
            return state["write"].width, 0

        def get_seq_length(self) -> int:
            return state["seen"]

        def get_max_length(self) -> int:
            return width

        def keep(self, rows) -> None:
            self.keys, self.values = self.keys.index_select(0, rows), self.values.index_select(0, rows)

    return Cache(layers=[BufferLayer() for _ in range(layers)])


def _mask(visible: Any, model: Any) -> Any:  # Any: torch tensors and a transformers model
    """A boolean 4-D mask as the model's attention takes it (eager attention adds a float mask)."""
    if getattr(model.config, "_attn_implementation", None) != "eager":
        return visible
    return additive_mask(visible, model.dtype)


def branch_points(prompts: Sequence[Sequence[int]]) -> set[int]:
    """Positions where prompts that share all tokens before them part (or one of them ends)."""
    ordered = sorted(tuple(p) for p in prompts)
    return {common_prefix_length([a, b]) for a, b in zip(ordered, ordered[1:])} - {0}


def plan_chunks(prompts: Sequence[Sequence[int]], chunk: int = CHUNK_TOKENS, pass_tokens: int = PASS_TOKENS) -> list[tuple[int, int]]:
    """The prefill passes ``[start, end)``: the cuts that minimise tokens run plus ``pass_tokens`` per pass.

    A pass runs one row per distinct prefix ``prompt[:end]`` among the prompts longer than ``start``, so
    cutting at a branch point runs nothing twice, and not cutting there runs the stretch before it once
    per branch: a few duplicated tokens instead of a pass of 1 to 24 tokens per row. Cuts fall on branch
    points (or every ``chunk`` positions in a longer unbranched stretch); no pass is longer than ``chunk``.
    """
    longest = max(len(p) for p in prompts)
    points = sorted(branch_points(prompts) | {longest})
    cuts = [0]
    for point in points:
        while point - cuts[-1] > chunk:
            cuts.append(cuts[-1] + chunk)
        if point > cuts[-1]:
            cuts.append(point)
    # The group of each prompt at every cut: equal ids, equal tokens before the cut (or the whole prompt).
    ids: list[list[int]] = [[0] * len(prompts)]
    for a, b in zip(cuts, cuts[1:]):
        keys: dict[tuple[int, tuple[int, ...]], int] = {}
        ids.append([keys.setdefault((ids[-1][p], tuple(prompt[a:b])), len(keys)) for p, prompt in enumerate(prompts)])
    best = [0.0] + [float("inf")] * (len(cuts) - 1)
    back = [0] * len(cuts)
    for j in range(1, len(cuts)):
        for i in range(j - 1, -1, -1):
            width = cuts[j] - cuts[i]
            if width > chunk:
                break
            rows = len({ids[j][p] for p, prompt in enumerate(prompts) if len(prompt) > cuts[i]})
            cost = best[i] + pass_tokens + rows * width
            if cost < best[j]:
                best[j], back[j] = cost, i
    passes, j = [], len(cuts) - 1
    while j > 0:
        passes.append((cuts[back[j]], cuts[j]))
        j = back[j]
    return passes[::-1]


def chunk_groups(prompts: Sequence[Sequence[int]], start: int, end: int, previous: Sequence[int]) -> list[int]:
    """Group of each prompt (index into the chunk's rows, -1 if it ended before ``start``): same group, same tokens before ``end``."""
    keys: dict[tuple[int, tuple[int, ...]], int] = {}
    groups = []
    for p, prompt in enumerate(prompts):
        if len(prompt) <= start:
            groups.append(-1)
            continue
        groups.append(keys.setdefault((previous[p], tuple(prompt[start:end])), len(keys)))
    return groups


def prefill_buffer(
    model: Any,  # Any: a transformers causal LM (transformers is read as Any)
    prompts: Sequence[Sequence[int]],
    pad_id: int,
    device: Any,  # Any: a torch device
    *,
    extra_width: int = 0,
    chunk: int = CHUNK_TOKENS,
    pass_tokens: int | None = None,  # default PASS_TOKENS
    forward: Any = None,  # Any: a callable taking the model's forward arguments; None: the model, keeping last logits
) -> tuple[Any, dict[str, Any], Any, int]:  # Any: the buffer cache, its state and torch logits
    """The prompts' keys and values in a fresh buffer cache (token j of prompt i at row i, column j; ``extra_width``
    free columns after the longest), run in the passes of ``plan_chunks``: (cache, its state, the logits each
    prompt's last token predicts or None where ``forward`` is given, prompt tokens the model ran)."""
    import torch

    count = len(prompts)
    longest = max(len(p) for p in prompts)
    state: dict[str, Any] = {"seen": 0}  # Any: the buffer cache's shared counters and tensors, read by its layers
    cache = buffer_cache(count, longest + extra_width, model.config.get_text_config(decoder=True).num_hidden_layers, state)
    name = cache_argument(model)
    last: dict[int, Any] = {}  # prompt -> the logits its last token predicts
    tokens_run = 0
    groups = [0] * count
    for start, end in plan_chunks(prompts, chunk, PASS_TOKENS if pass_tokens is None else pass_tokens):
        groups = chunk_groups(prompts, start, end, groups)
        rows = max(groups) + 1
        readers = [groups.index(g) for g in range(rows)]  # one member per row: its buffer row holds the shared past
        ids = torch.full((rows, end - start), pad_id, dtype=torch.long)
        for g, p in enumerate(readers):
            run = prompts[p][start:end]
            ids[g, : len(run)] = torch.tensor(run, dtype=torch.long)
            tokens_run += len(run)
        members = [p for p in range(count) if groups[p] >= 0]
        state["write"] = _Write(
            torch.tensor(members, device=device),
            torch.tensor([groups[p] for p in members], device=device),
            slice(start, end),
            torch.tensor(readers, device=device),
            end,
        )
        state["seen"] = start
        positions = torch.arange(start, end, device=device)
        causal = positions[:, None] >= torch.arange(end, device=device)[None, :]
        arguments = {
            "input_ids": ids.to(device),
            "attention_mask": _mask(causal[None, None].expand(rows, 1, -1, -1), model),
            "position_ids": positions[None, :].expand(rows, -1),
            "use_cache": True,
            name: cache,
        }
        if forward is not None:
            forward(**arguments)
            continue
        ending = sorted({len(prompts[p]) - 1 - start for p in members if start < len(prompts[p]) <= end})
        output = model(logits_to_keep=torch.tensor(ending or [end - start - 1], device=device), **arguments)
        for p in members:
            if start < len(prompts[p]) <= end:
                last[p] = output.logits[groups[p], ending.index(len(prompts[p]) - 1 - start)]
    logits = None if forward is not None else torch.stack([last[p] for p in range(count)])
    return cache, state, logits, tokens_run


def buffer_layers(cache: Any, lengths: Sequence[int]) -> list[tuple[Any, Any]]:  # Any: the buffer cache and torch tensors
    """(keys, values) per layer of a prefilled buffer, as wide as the longest of ``lengths``."""
    width = max(lengths)
    return [(layer.keys[:, :, :width], layer.values[:, :, :width]) for layer in cache.layers]


def buffered_greedy_generate(
    model: Any,  # Any: a transformers causal LM (transformers is read as Any)
    prompts: Sequence[Sequence[int]],
    max_new_tokens: int,
    eos_ids: Sequence[int],
    pad_id: int,
    device: Any,  # Any: a torch device
    stop_criteria: Any = None,  # Any: transformers StoppingCriteria
    chunk: int = CHUNK_TOKENS,
    draft: int = DRAFT_TOKENS,
    pass_tokens: int | None = None,  # default PASS_TOKENS
) -> tuple[list[list[int]], int]:
    """Greedy new tokens of each prompt (up to and including a stop), and the prompt tokens the model ran."""
    import torch

    from culturebias.adapters.hf.shared_generation import sequences_so_far

    count = len(prompts)
    cache, state, logits, tokens_run = prefill_buffer(
        model, prompts, pad_id, device, extra_width=max_new_tokens + draft, chunk=chunk, pass_tokens=pass_tokens
    )
    name = cache_argument(model)

    replies: list[list[int]] = [[] for _ in range(count)]
    stopped = [False] * count
    eos = set(eos_ids)

    def accept(p: int, token: int) -> None:
        replies[p].append(token)
        if token in eos or len(replies[p]) >= max_new_tokens:
            stopped[p] = True
        elif stop_criteria is not None:
            stopped[p] = bool(stop_criteria(sequences_so_far(prompts, replies, [p], pad_id, device), logits[:1])[0])

    # transformers' greedy step: the float32 argmax of the last position's logits.
    for p, token in enumerate(logits.float().argmax(dim=-1).tolist()):
        accept(p, token)
    active = list(range(count))  # prompt of each buffer row
    while not all(stopped[p] for p in active):
        if 4 * sum(stopped[p] for p in active) >= len(active):
            keep = [k for k, p in enumerate(active) if not stopped[p]]
            active = [active[k] for k in keep]
            rows_kept = torch.tensor(keep, device=device)
            for layer in cache.layers:
                layer.keep(rows_kept)
        # Each row's last token (not yet through the model) and, while the row runs, a draft of what follows it.
        drafts = [[] if stopped[p] else prompt_lookup(list(prompts[p]) + replies[p], min(draft, max_new_tokens - len(replies[p]) - 1)) for p in active]
        steps = 1 + max(len(d) for d in drafts)
        ids = torch.full((len(active), steps), pad_id, dtype=torch.long)
        for k, (p, d) in enumerate(zip(active, drafts)):
            ids[k, : 1 + len(d)] = torch.tensor([replies[p][-1]] + d, dtype=torch.long)
        first = torch.tensor([len(prompts[p]) + len(replies[p]) - 1 for p in active], device=device)
        positions = first[:, None] + torch.arange(steps, device=device)[None, :]
        width = int(positions.max()) + 1
        state["write"] = _Write(torch.arange(len(active), device=device)[:, None].expand(-1, steps), None, positions, None, width)
        state["seen"] = width - steps
        visible = torch.arange(width, device=device)[None, None, :] <= positions[:, :, None]
        output = model(
            input_ids=ids.to(device),
            attention_mask=_mask(visible[:, None], model),
            position_ids=positions,
            use_cache=True,
            logits_to_keep=0,
            **{name: cache},
        )
        logits = output.logits
        greedy = logits.float().argmax(dim=-1).tolist()
        for k, (p, d) in enumerate(zip(active, drafts)):
            # The greedy tokens while the draft agrees with them: each was predicted from greedy tokens only.
            for i in range(1 + len(d)):
                if stopped[p]:
                    break
                accept(p, greedy[k][i])
                if i == len(d) or d[i] != greedy[k][i]:
                    break
    return replies, tokens_run


def prompt_lookup(tokens: Sequence[int], limit: int, longest_ngram: int = 3) -> list[int]:
    """Up to ``limit`` tokens that followed the latest earlier occurrence of the last n-gram of ``tokens`` (n = 3, 2, 1)."""
    if limit <= 0:
        return []
    for n in range(min(longest_ngram, len(tokens) - 1), 0, -1):
        tail = list(tokens[-n:])
        for start in range(len(tokens) - n - 1, -1, -1):
            if list(tokens[start : start + n]) == tail:
                return list(tokens[start + n : start + n + limit])
    return []
