"""Option orders: which dataset option is shown at which position.

``cyclic`` (the default, and the meaning of ``permutation`` in replay files):
permutation ``k`` moves dataset option ``i`` to position ``(i + k) mod n``.
``circulant`` reproduces the KoBBQ authors' preprocessing, whose k-th order is
row k of ``scipy.linalg.circulant(options)``: position ``j`` shows option
``(k - j) mod n``. Both put every option at every position exactly once over
the three orders; they differ in which order is called 1 and 2.
"""

from __future__ import annotations

from typing import Literal

PermutationScheme = Literal["cyclic", "circulant"]


def shown_order(n_options: int, permutation: int, scheme: PermutationScheme = "cyclic") -> tuple[int, ...]:
    """Dataset option index displayed at each position 0..n-1."""
    if not 0 <= permutation < n_options:
        raise ValueError(f"permutation {permutation} outside 0..{n_options - 1}")
    if scheme == "cyclic":
        return tuple((position - permutation) % n_options for position in range(n_options))
    if scheme == "circulant":
        return tuple((permutation - position) % n_options for position in range(n_options))
    raise ValueError(f"unknown permutation scheme {scheme!r}")
