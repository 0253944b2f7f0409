"""Homogeneous subsets of a Tukey HSD: the groups a compact letter display gives one letter each.

A subset is a maximal set of groups no two of which differ significantly
(the maximal cliques of the "not significantly different" graph). A model
that scores the same everywhere has one subset holding every group.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def homogeneous_groups(names: Sequence[str], significant_pairs: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Maximal subsets of ``names`` without a significant pair, each in ``names``' order, ordered by their members."""
    different = {frozenset(pair) for pair in significant_pairs}
    alike = {n: {m for m in names if m != n and frozenset((n, m)) not in different} for n in names}
    cliques: list[set[str]] = []

    def extend(chosen: set[str], candidates: set[str], excluded: set[str]) -> None:  # Bron–Kerbosch with a pivot
        if not candidates and not excluded:
            cliques.append(chosen)
            return
        pivot = max(candidates | excluded, key=lambda n: len(alike[n] & candidates))
        for name in sorted(candidates - alike[pivot], key=names.index):
            extend(chosen | {name}, candidates & alike[name], excluded & alike[name])
            candidates = candidates - {name}
            excluded = excluded | {name}

    extend(set(), set(names), set())
    ordered = [sorted(c, key=names.index) for c in cliques]
    return sorted(ordered, key=lambda group: [names.index(n) for n in group])
