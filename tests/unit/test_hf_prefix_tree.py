"""Packing shared-prefix sequences into token-tree rows (hand-built tries)."""

from __future__ import annotations

import numpy as np

from culturebias.adapters.hf.prefix_tree import TreeRow, common_prefix_length, pack_rows


def test_shared_prefixes_are_stored_once():
    rows = pack_rows([(2, [5], 0), (0, [1, 2, 3], 1), (1, [1, 2, 4], 2)], capacity=10)
    assert len(rows) == 1
    row = rows[0]
    # Lexicographic order: [1,2,3], [1,2,4], [5]
    assert row.tokens == [1, 2, 3, 4, 5]
    assert row.parents == [-1, 0, 1, 1, -1]
    assert row.depths == [0, 1, 2, 2, 0]
    assert row.scored == [(0, [1, 2]), (1, [3]), (2, [4])]


def test_ancestor_matrix():
    row = pack_rows([(0, [1, 2, 3], 1), (1, [1, 2, 4], 1), (2, [1, 7], 1)], capacity=10)[0]
    assert row.tokens == [1, 2, 3, 4, 7]
    expected = np.array(
        [
            [1, 0, 0, 0, 0],
            [1, 1, 0, 0, 0],
            [1, 1, 1, 0, 0],
            [1, 1, 0, 1, 0],
            [1, 0, 0, 0, 1],
        ],
        dtype=bool,
    )
    assert (row.ancestors() == expected).all()


def test_rows_close_when_the_new_tokens_would_overflow():
    items = [(0, [1, 2, 3], 1), (1, [1, 2, 4], 1), (2, [5, 6], 1), (3, [9, 9, 9, 9, 9, 9], 1)]
    rows = pack_rows(items, capacity=4)
    assert [r.tokens for r in rows] == [[1, 2, 3, 4], [5, 6], [9, 9, 9, 9, 9, 9]]  # an over-long item gets its own row
    assert [index for r in rows for index, _ in r.scored] == [0, 1, 2, 3]


def test_identical_paths_share_every_node():
    row = TreeRow()
    assert row.insert([4, 5]) == [0, 1]
    assert row.insert([4, 5]) == [0, 1]
    assert len(row) == 2


def test_common_prefix_length():
    assert common_prefix_length([[1, 2, 3], [1, 2, 4], [1, 2]]) == 2
    assert common_prefix_length([[1, 2], [3]]) == 0
    assert common_prefix_length([[7, 8]]) == 2
