"""From a (context, continuation) pair to token ids and the index of the first scored token.

PROTOCOLS §0.1: tokenise ``context + continuation`` once, without special tokens
(templated text already holds BOS); the continuation is every token whose
character span ends after the context, so a token straddling the boundary is
scored. ``boundary_rule="authors"`` instead counts the context's tokens by
tokenising the context alone, as the TWBias authors' code does.

A sequence whose first scored token would be the very first token (empty
context, or a first token that straddles the boundary) has nothing to predict it
from: BOS is prepended where the tokenizer adds one to plain text by default,
otherwise scoring starts at the second token. The tokenizer's *default* decides,
not the mere existence of a BOS token: SmolLM2 names ``<|im_start|>`` its BOS but
never prepends it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from culturebias.domain.requests import LoglikelihoodRequest

STRADDLE = "straddle-to-continuation"
AUTHORS = "authors"


@dataclass(frozen=True)
class ScoredSequence:
    ids: tuple[int, ...]
    start: int  # index of the first scored token; tokens start..end are scored
    truncated: bool = False

    @property
    def n_scored(self) -> int:
        return len(self.ids) - self.start


def default_bos_id(tokenizer: Any) -> int | None:  # Any: a transformers tokenizer
    """BOS id if plain tokenisation prepends it by default, else None."""
    bos = tokenizer.bos_token_id
    if bos is None:
        return None
    with_specials = tokenizer("a", add_special_tokens=True)["input_ids"]
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    if len(with_specials) > len(plain) and with_specials[0] == bos:
        return bos
    return None


class RequestTokenizer:
    def __init__(self, tokenizer: Any, boundary_rule: str = STRADDLE, max_length: int | None = None):  # Any: a transformers tokenizer
        if boundary_rule not in (STRADDLE, AUTHORS):
            raise ValueError(f"unknown boundary rule {boundary_rule!r}")
        self._tokenizer = tokenizer
        self._rule = boundary_rule
        self._max_length = max_length
        self.bos_id = default_bos_id(tokenizer)

    def encode(self, requests: Sequence[LoglikelihoodRequest]) -> list[ScoredSequence]:
        texts = [r.context + r.continuation for r in requests]
        if not texts:
            return []
        full = self._tokenizer(texts, add_special_tokens=False, return_offsets_mapping=self._rule == STRADDLE)
        if self._rule == AUTHORS:
            contexts = self._tokenizer([r.context for r in requests], add_special_tokens=False)["input_ids"]
            starts = [len(c) if r.context else 0 for c, r in zip(contexts, requests)]
        else:
            starts = [_first_after(offsets, len(r.context)) for offsets, r in zip(full["offset_mapping"], requests)]
        out = []
        for ids, start in zip(full["input_ids"], starts):
            out.append(self._finish(list(ids), min(start, len(ids))))
        return out

    def _finish(self, ids: list[int], start: int) -> ScoredSequence:
        if start == 0 and ids:
            if self.bos_id is not None:
                ids = [self.bos_id, *ids]
            start = 1
        truncated = False
        if self._max_length is not None and len(ids) > self._max_length:
            # Keep the end (the continuation); the oldest context tokens go first.
            drop = len(ids) - self._max_length
            ids = ids[drop:]
            start = max(1, start - drop)
            truncated = True
        return ScoredSequence(tuple(ids), start, truncated)


def _first_after(offsets: Sequence[tuple[int, int]], boundary: int) -> int:
    for index, (_, end) in enumerate(offsets):
        if end > boundary:
            return index
    return len(offsets)
