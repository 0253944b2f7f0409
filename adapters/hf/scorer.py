"""Batched continuation log-likelihood (PROTOCOLS §0.1) with shared-prefix reuse.

Requests are deduplicated and tokenised once. Requests that share a context (every
sentence of a TWBias prompt type shares the rendered chat prompt; every option of
a BBQ item shares the question) form a group whose shared tokens run once, in a
batch of such prefixes; their key/value cache is then indexed out to the batches
of continuations. Prefixes that share tokens themselves (a BBQ item under its
option orders, the instruction across items) go to one batch, which runs each
shared stretch once, in merged chunks on one key/value buffer (``buffered_generation``,
torch models without a sliding window; others level by level, ``shared_prefill``).

Continuations are packed into token-tree rows (``prefix_tree``): sequences that
share a prefix beyond the context (an original sentence and its replacements)
share those tokens too, each token attending only to its ancestors. Models whose
attention cannot take such a mask get length-sorted, right-padded rows instead.
``model.prefix_cache=false`` turns all reuse off: whole sequences, longest first.

The output embedding runs only at positions that predict a scored token, a few
at a time (``scoring_head``), where the model's logits are plainly that product.

Scores are exact: a prefix stops one token before the earliest scored token, so
every scored token is predicted inside a continuation pass, and padding never
enters a scored position's attention.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from culturebias.adapters.hf.buffered_generation import buffer_layers, prefill_buffer, shares_prefixes
from culturebias.adapters.hf.identified import Identified
from culturebias.adapters.hf.loading import LoadedModel
from culturebias.adapters.hf.local_backend import score_provenance
from culturebias.adapters.hf.model_options import LocalModelOptions
from culturebias.adapters.hf.prefix_tree import TreeRow, common_prefix_length, pack_rows
from culturebias.adapters.hf.scoring_head import scoring_head
from culturebias.adapters.hf.shared_generation import shared_batches
from culturebias.adapters.hf.shared_prefill import additive_mask, as_cache, cache_layers, prefill
from culturebias.adapters.hf.tokens import RequestTokenizer, ScoredSequence
from culturebias.domain.identity import ScoreProvenance
from culturebias.domain.requests import LoglikelihoodRequest, LoglikelihoodResult
from culturebias.adapters.hf.dedupe import stored_attempt, unique_requests
from culturebias.logs import get_logger
from culturebias.ports.progress import ProgressTask

log = get_logger("culturebias.hf")

# Upper bound on float32 logits held at once (elements): batches shrink for big vocabularies.
LOGITS_BUDGET = 2**27
# Tokens per forward pass that the split head allows whatever the vocabulary (it never holds all logits).
SPLIT_HEAD_BATCH_TOKENS = 2048
# Nodes per token-tree row (a row grows to the longest single sequence when that is longer).
TREE_ROW_TOKENS = 256


@dataclass(frozen=True)
class _Row:
    index: int  # position in the unique-request list
    ids: Sequence[int]  # tokens fed to this forward pass (after any shared prefix)
    start: int  # first scored token within ``ids`` (>= 1)

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class _PrefixGroup:
    members: tuple[int, ...]
    prefix: tuple[int, ...]


def _all_known(rows: Sequence[Any], known: set[int] | frozenset[int]) -> bool:  # Any: padded or token-tree rows
    """Whether every request scored in these rows has a known result (then the batch is skipped)."""
    if not known:
        return False
    for row in rows:
        indices = [index for index, _ in row.scored] if isinstance(row, TreeRow) else [row.index]
        if any(index not in known for index in indices):
            return False
    return True


def model_max_length(config: Any) -> int | None:  # Any: a transformers config
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


class HFScorer(Identified):
    def __init__(
        self,
        loaded: LoadedModel,
        options: LocalModelOptions,
        *,
        tree_packing: bool | None = None,
        split_head: bool = True,
        provenance: ScoreProvenance | None = None,
        buffered_prefill: bool | None = None,
    ):
        """``tree_packing=None`` packs token trees where the attention implementation allows it.

        ``buffered_prefill=None`` prefills shared prefixes on one buffer in merged chunks (``buffered_generation``)
        where the model's attention takes custom masks and has no sliding window, else level by level (``shared_prefill``).

        ``split_head=False`` scores from the model's full logits even where the split head applies.
        ``provenance`` replaces the default (``hf`` on the model's device) for a backend that reuses this scorer.
        """
        self._model = loaded.model
        self._device = loaded.device
        self._identity = loaded.identity
        self._batch_size = options.settled_batch_size()
        self._prefix_cache = options.prefix_cache
        max_length = options.max_length or model_max_length(self._model.config)
        self._tokens = RequestTokenizer(loaded.tokenizer, options.boundary_rule, max_length)
        tokenizer = loaded.tokenizer
        pad = tokenizer.pad_token_id
        self._pad_id = pad if pad is not None else (tokenizer.eos_token_id or 0)
        vocab = self._model.get_output_embeddings().weight.shape[0]
        self._head = scoring_head(self._model, allow_split=split_head)
        self._max_batch_tokens = max(1, LOGITS_BUDGET // max(1, vocab))
        if self._head.split:
            self._max_batch_tokens = max(self._max_batch_tokens, SPLIT_HEAD_BATCH_TOKENS)
        attention = getattr(self._model.config, "_attn_implementation", None)
        supported = attention in ("sdpa", "eager")
        self._tree = options.prefix_cache and supported and (tree_packing is None or tree_packing)
        self._eager = attention == "eager"
        window = getattr(self._model.config, "sliding_window", None)
        # A custom mask replaces sliding-window masks: trees only where no window is ever reached.
        self._window = window if isinstance(window, int) and window > 0 else None
        buffered = supported and shares_prefixes(self._model) and not getattr(self._model, "takes_custom_masks", False)
        self._buffered = buffered and (buffered_prefill is None or buffered_prefill)
        self.tokens_run = 0  # real tokens that went through the model (shared prefixes and tree nodes once)
        self._provenance = provenance or score_provenance("hf", options, device=loaded.device, dtype=loaded.dtype)

    def check_loglikelihood(self) -> None:
        return None

    # ------------------------------------------------------------------ public

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], progress: ProgressTask | None = None
    ) -> list[LoglikelihoodResult]:
        import torch

        unique, position, multiplicity = unique_requests(requests)

        sequences = self._tokens.encode(unique)
        truncated = sum(s.truncated for s in sequences)
        if truncated:
            log.warning("requests longer than the model's context were left-truncated", count=truncated)
        results: list[LoglikelihoodResult | None] = [None] * len(unique)
        # Results stored by an interrupted attempt at these requests: their batches are skipped.
        sink, owners, stored = stored_attempt(progress, requests, position)
        for i, result in stored.items():
            results[i] = result
        known = set(stored)

        def finish(indices: Sequence[int]) -> None:
            if progress is not None:
                progress.advance(sum(multiplicity[i] for i in indices))
            if sink is not None and indices:
                sink.deliver({r: results[i] for i in indices for r in owners[i]})

        empty = [i for i, s in enumerate(sequences) if s.n_scored <= 0 and i not in known]
        for i in empty:
            results[i] = LoglikelihoodResult(0.0, 0, True)
        finish(empty)

        groups, singles = self._plan(unique, sequences)
        tree_groups: list[_PrefixGroup] = []
        linear_groups: list[_PrefixGroup] = []
        tree_singles: list[int] = []
        linear_singles: list[int] = []
        for group in groups:
            fits = self._tree and self._fits_window(group.members, sequences)
            (tree_groups if fits else linear_groups).append(group)
        for i in singles:
            (tree_singles if self._tree and self._fits_window([i], sequences) else linear_singles).append(i)
        with torch.inference_mode():
            for tree, prefixed in ((True, tree_groups), (False, linear_groups)):
                for batch in self._prefix_batches(prefixed):
                    self._score_prefix_batch(batch, sequences, results, finish, tree, known)
            for tree, alone in ((True, tree_singles), (False, linear_singles)):
                items = [(i, sequences[i].ids, sequences[i].start) for i in alone]
                for chunk in self._batches(self._pack(items, tree)):
                    if not _all_known(chunk, known):
                        self._store(self._score(chunk, tree), results, finish)
        return [results[position[r]] for r in requests]  # type: ignore[misc]  # every result is set by now

    def _fits_window(self, members: Sequence[int], sequences: Sequence[ScoredSequence]) -> bool:
        return self._window is None or max(len(sequences[i].ids) for i in members) <= self._window

    # ------------------------------------------------------------------ planning

    def _plan(
        self, unique: Sequence[LoglikelihoodRequest], sequences: Sequence[ScoredSequence]
    ) -> tuple[list[_PrefixGroup], list[int]]:
        scorable = [i for i, s in enumerate(sequences) if s.n_scored > 0]
        if not self._prefix_cache:
            return [], scorable
        by_context: dict[str, list[int]] = defaultdict(list)
        for i in scorable:
            by_context[unique[i].context].append(i)
        groups, singles = [], []
        for members in by_context.values():
            if len(members) < 2:
                singles.extend(members)
                continue
            shared = common_prefix_length([sequences[i].ids for i in members])
            # Stop before the earliest scored token: its prediction must come from a continuation pass.
            length = min(shared, min(sequences[i].start for i in members) - 1)
            if length < 1:
                singles.extend(members)
                continue
            groups.append(_PrefixGroup(tuple(members), tuple(sequences[members[0]].ids[:length])))
        return groups, singles

    def _prefix_batches(self, groups: list[_PrefixGroup]) -> Iterator[list[_PrefixGroup]]:
        # Prefixes that share tokens (a BBQ item under its option orders) go to one batch, which runs them once.
        prefixes = [g.prefix for g in groups]
        for batch in shared_batches(range(len(groups)), prefixes, self._batch_size):
            yield [groups[i] for i in batch]

    def _batches(self, rows: list, length=len) -> Iterator[list]:
        """Longest first; at most ``batch_size`` rows and a bounded number of tokens per batch."""
        ordered = sorted(rows, key=length, reverse=True)
        batch: list = []
        for row in ordered:
            if batch and (len(batch) >= self._batch_size or (len(batch) + 1) * length(batch[0]) > self._max_batch_tokens):
                yield batch
                batch = []
            batch.append(row)
        if batch:
            yield batch

    @staticmethod
    def _pack(items: Sequence[tuple[int, Sequence[int], int]], tree: bool) -> list:
        """``(request index, ids, first scored position)`` items as token-tree rows, or one padded row each."""
        if not items:
            return []
        if tree:
            return pack_rows(items, max(TREE_ROW_TOKENS, max(len(ids) for _, ids, _ in items)))
        return [_Row(index, ids, start) for index, ids, start in items]

    # ------------------------------------------------------------------ execution

    def _score_prefix_batch(self, batch: list[_PrefixGroup], sequences, results, finish, tree: bool, known=frozenset()) -> None:
        import torch

        owned: list[tuple[_Row | TreeRow, int]] = []  # (row, position of its group in the batch)
        for g, group in enumerate(batch):
            cut = len(group.prefix)
            items = [(i, sequences[i].ids[cut:], sequences[i].start - cut) for i in group.members]
            owned.extend((row, g) for row in self._pack(items, tree))
        # Planned from the whole batch, so that the batches left to run are those an uninterrupted call runs.
        chunks = [c for c in self._batches(owned, length=lambda pair: len(pair[0])) if not _all_known([r for r, _ in c], known)]
        if not chunks:
            return
        cache, prefix_mask, prefix_lengths = self._run_prefixes([g.prefix for g in batch])
        for chunk in chunks:
            select = torch.tensor([g for _, g in chunk], device=self._device)
            past = {"past": self._fork(cache, select), "past_mask": prefix_mask[select], "past_lengths": prefix_lengths[select]}
            self._store(self._score([row for row, _ in chunk], tree, **past), results, finish)

    def _score(self, rows: list, tree: bool, **past: Any) -> dict[int, tuple[float, int, bool]]:  # Any: torch tensors of the shared prefix
        return self._score_tree_rows(rows, **past) if tree else self._score_rows(rows, **past)

    @staticmethod
    def _fork(cache, select):
        """A cache restricted to the rows ``select``, leaving ``cache`` itself untouched."""
        fork = copy.copy(cache)
        fork.layers = [copy.copy(layer) for layer in cache.layers]
        fork.batch_select_indices(select)
        return fork

    def _score_tree_rows(self, rows: list[TreeRow], past=None, past_mask=None, past_lengths=None) -> dict[int, tuple[float, int, bool]]:
        import numpy as np
        import torch

        count, width = len(rows), max(len(row) for row in rows)
        before = 0 if past_mask is None else past_mask.shape[1]
        ids = np.full((count, width), self._pad_id, dtype=np.int64)
        positions = np.zeros((count, width), dtype=np.int64)
        parents = np.zeros((count, width), dtype=np.int64)
        visible = np.zeros((count, 1, width, before + width), dtype=bool)
        offsets = np.zeros(count, dtype=np.int64) if past_lengths is None else past_lengths.cpu().numpy()
        if past_mask is not None:
            visible[:, 0, :, :before] = past_mask.cpu().numpy().astype(bool)[:, None, :]
        self.tokens_run += sum(len(row) for row in rows)
        for b, row in enumerate(rows):
            n = len(row)
            ids[b, :n] = row.tokens
            positions[b, :n] = offsets[b] + np.asarray(row.depths)
            parents[b, :n] = np.maximum(np.asarray(row.parents), 0)
            visible[b, 0, :n, before : before + n] = row.ancestors()
            pad = np.arange(n, width)
            visible[b, 0, pad, before + pad] = True  # padding sees itself: no empty softmax row
        mask = torch.from_numpy(visible).to(self._device)
        if self._eager:
            mask = additive_mask(mask, self._model.dtype)
        kwargs: dict[str, Any] = {"use_cache": past is not None}  # Any: the model's forward arguments
        if past is not None:
            kwargs["past_key_values"] = past
        owners: list[int] = []
        flat: list[int] = []
        indices: list[int] = []
        for b, row in enumerate(rows):
            for index, nodes in row.scored:
                owners.extend([len(indices)] * len(nodes))
                flat.extend(b * width + node for node in nodes)
                indices.append(index)
        # A node's token is predicted by the output at its parent's position.
        flat_nodes = np.asarray(flat, dtype=np.int64)
        parent_flat = (flat_nodes // width) * width + parents.reshape(-1)[flat_nodes]
        return self._sum_scores(
            parent_flat,
            ids.reshape(-1)[flat_nodes],
            owners,
            indices,
            input_ids=torch.from_numpy(ids).to(self._device),
            attention_mask=mask,
            position_ids=torch.from_numpy(positions).to(self._device),
            **kwargs,
        )

    def _sum_scores(self, parent_flat, targets, owners, indices, **forward: Any) -> dict[int, tuple[float, int, bool]]:  # Any: the model's forward arguments
        """Run the forward pass and sum per request: (log-probability, scored tokens, all greedy)."""
        import torch

        logprobs, greedy = self._head.score(
            torch.as_tensor(parent_flat, dtype=torch.long, device=self._device),
            torch.as_tensor(targets, dtype=torch.long, device=self._device),
            **forward,
        )
        owner_t = torch.tensor(owners, dtype=torch.long, device=self._device)
        sums = torch.zeros(len(indices), dtype=torch.float64, device=self._device)
        sums.index_add_(0, owner_t, logprobs)
        misses = torch.zeros(len(indices), dtype=torch.float64, device=self._device)
        misses.index_add_(0, owner_t, (~greedy).double())
        counts = torch.bincount(owner_t, minlength=len(indices))
        return {
            index: (float(total), int(n), bool(miss == 0))
            for index, total, n, miss in zip(indices, sums.tolist(), counts.tolist(), misses.tolist())
        }

    @staticmethod
    def _store(scores: dict[int, tuple[float, int, bool]], results, finish) -> None:
        for index, (logprob, n_tokens, greedy) in scores.items():
            results[index] = LoglikelihoodResult(logprob, n_tokens, greedy)
        finish(list(scores))

    def _run_prefixes(self, prefixes: list[tuple[int, ...]]):
        """The prefixes' cache (their shared stretches run once), its mask (holes are padding) and real lengths."""

        def forward(past=None, **kwargs: Any):  # Any: the model's forward arguments (tensors; torch is read as Any)
            if past is not None:
                kwargs["past_key_values"] = as_cache(past)
            return cache_layers(self._head.prefix(use_cache=True, **kwargs)), None

        if self._buffered:
            return self._run_prefixes_buffered(prefixes)
        filled = prefill(prefixes, forward, self._pad_id, self._device)
        self.tokens_run += filled.tokens_run
        return as_cache(filled.layers), filled.mask, filled.lengths

    def _run_prefixes_buffered(self, prefixes: list[tuple[int, ...]]):
        """As ``_run_prefixes``, on one buffer: prefix i's token j at column j (the holes are on the right)."""
        import torch

        cache, _, _, tokens_run = prefill_buffer(self._model, prefixes, self._pad_id, self._device, forward=self._head.prefix)
        self.tokens_run += tokens_run
        lengths = torch.tensor([len(p) for p in prefixes], dtype=torch.long, device=self._device)
        mask = (torch.arange(int(lengths.max()), device=self._device)[None, :] < lengths[:, None]).long()
        return as_cache(buffer_layers(cache, [len(p) for p in prefixes])), mask, lengths

    def _score_rows(self, rows: list[_Row], past=None, past_mask=None, past_lengths=None) -> dict[int, tuple[float, int, bool]]:
        import torch

        width = max(len(r.ids) for r in rows)
        self.tokens_run += sum(len(r.ids) for r in rows)
        ids = torch.full((len(rows), width), self._pad_id, dtype=torch.long)
        for k, row in enumerate(rows):
            ids[k, : len(row.ids)] = torch.tensor(row.ids, dtype=torch.long)
        ids = ids.to(self._device)
        lengths = torch.tensor([len(r.ids) for r in rows], device=self._device)
        own = (torch.arange(width, device=self._device)[None, :] < lengths[:, None]).long()
        kwargs: dict[str, Any] = {"attention_mask": own, "use_cache": past is not None}  # Any: the model's forward arguments
        if past is not None:
            kwargs["past_key_values"] = past
            kwargs["position_ids"] = past_lengths[:, None] + torch.arange(width, device=self._device)[None, :]
            if past_mask is None:
                past_mask = torch.ones((len(rows), past.get_seq_length()), dtype=torch.long, device=self._device)
            kwargs["attention_mask"] = torch.cat([past_mask, own], dim=1)
        parent_flat, targets, owners = [], [], []
        for k, row in enumerate(rows):
            for j in range(row.start, len(row.ids)):  # token j is predicted at position j - 1
                parent_flat.append(k * width + j - 1)
                targets.append(row.ids[j])
                owners.append(k)
        return self._sum_scores(parent_flat, targets, owners, [row.index for row in rows], input_ids=ids, **kwargs)
