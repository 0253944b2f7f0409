"""Packing token sequences that share prefixes into rows of a token tree.

A row holds the union of several sequences' token paths as a trie, flattened
parents-first: each distinct prefix appears once. Run with an attention mask in
which every token sees only its ancestors, and positions equal to its depth, a
row gives every token exactly the logits a one-at-a-time pass would give it:
TWBias's original and replaced sentences share everything before the first
replaced term, so a row computes that stretch once.

Pure Python; the scorer turns rows into tensors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence


@dataclass
class TreeRow:
    tokens: list[int] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)  # -1: the row's root (its parent is the shared prefix, if any)
    depths: list[int] = field(default_factory=list)
    # (request index, node indices of the scored tokens); each scored node's parent predicts it.
    scored: list[tuple[int, list[int]]] = field(default_factory=list)
    _children: dict[tuple[int, int], int] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.tokens)

    def insert(self, ids: Sequence[int]) -> list[int]:
        """Add a path; returns its node indices."""
        path, parent = [], -1
        for depth, token in enumerate(ids):
            key = (parent, token)
            node = self._children.get(key)
            if node is None:
                node = len(self.tokens)
                self._children[key] = node
                self.tokens.append(token)
                self.parents.append(parent)
                self.depths.append(depth)
            path.append(node)
            parent = node
        return path

    def ancestors(self):
        """Boolean matrix: [i, j] is True when node j is node i or one of its ancestors."""
        import numpy as np

        n = len(self.tokens)
        matrix = np.zeros((n, n), dtype=bool)
        for i, parent in enumerate(self.parents):  # parents come before their children
            if parent >= 0:
                matrix[i] = matrix[parent]
            matrix[i, i] = True
        return matrix


def common_prefix_length(sequences: Sequence[Sequence[int]]) -> int:
    """How many leading tokens all ``sequences`` share."""
    first = sequences[0]
    length = len(first)
    for other in sequences[1:]:
        limit = min(length, len(other))
        i = 0
        while i < limit and first[i] == other[i]:
            i += 1
        length = i
        if length == 0:
            break
    return length


def pack_rows(items: Sequence[tuple[int, Sequence[int], int]], capacity: int) -> list[TreeRow]:
    """Pack ``(request index, ids, first scored position)`` items into rows of at most ``capacity`` nodes.

    Items are taken in lexicographic order of their ids, so each one shares the
    longest possible prefix with the one before it; a row is closed when the
    next item's new tokens would overflow it. An item longer than ``capacity``
    gets a row of its own.
    """
    rows: list[TreeRow] = []
    row: TreeRow | None = None
    previous: Sequence[int] = ()
    for index, ids, start in sorted(items, key=lambda item: tuple(item[1])):
        added = len(ids) - (common_prefix_length([previous, ids]) if row is not None else 0)
        if row is None or len(row) + added > capacity:
            row = TreeRow()
            rows.append(row)
        path = row.insert(ids)
        row.scored.append((index, path[start:]))
        previous = ids
    return rows
