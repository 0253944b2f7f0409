"""Counterpart groups for S_p (PROTOCOLS §4 construction step 5).

A group's anti-stereotyped term comes from its counterpart group: the one the seeds file names, else a
group of the same category, else (no category given) the group whose name is most similar by sentence
embedding, provided the similarity reaches a calibrated floor. A group left without a counterpart is
refused before any triplet is written: an unrelated group's term would make S_p meaningless.
"""

from __future__ import annotations

from typing import Literal, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from culturebias.domain.errors import DataError
from culturebias.domain.libra_build.keywords import SeedGroup

# Cosine floor for all-MiniLM-L6-v2 on group names. Calibrated on labelled pairs of social-group names
# (tests/unit/test_libra_counterparts.py): same-category pairs such as women/men 0.72, older/young people
# 0.72, Christians/Muslims 0.67, Samoans/Tongans 0.70 lie above it; the closest cross-category pairs
# (farmers/Indians 0.51, rural communities/older people 0.49, Pasifika/kaumātua 0.46) lie below.
SIMILARITY_FLOOR = 0.55

CounterpartSource = Literal["seeds", "category", "similarity"]


class Counterpart(BaseModel):
    """Where a group's anti-stereotyped terms come from, and why (listed in the build report for review)."""

    model_config = ConfigDict(frozen=True)

    group: str
    counterpart: str
    source: CounterpartSource
    similarity: float | None = None  # cosine of the two group names, where it decided


def needs_similarity(seeds: Sequence[SeedGroup]) -> bool:
    """Whether some group has neither a named counterpart nor a category to find one in."""
    return len(seeds) > 1 and any(g.counterpart is None and g.category is None for g in seeds)


def pair_groups(
    seeds: Sequence[SeedGroup],
    name_vectors: Sequence[Sequence[float]] | None = None,
    *,
    floor: float = SIMILARITY_FLOOR,
    antonym_keywords: frozenset[str] = frozenset(),
) -> tuple[Counterpart, ...]:
    """One counterpart per group; ``name_vectors`` (aligned with ``seeds``) are the group names' embeddings.

    A group every one of whose keywords has an antonym in the seeds file needs no counterpart. Raises
    DataError naming every group left without one."""
    names = [g.group for g in seeds]
    known = set(names)
    similarity = None
    if name_vectors is not None:
        vectors = np.asarray(name_vectors, dtype=float)
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        similarity = vectors @ vectors.T
    pairs: list[Counterpart] = []
    lacking: list[str] = []
    for i, group in enumerate(seeds):
        if group.counterpart is not None:
            if group.counterpart not in known or group.counterpart == group.group:
                raise DataError(f"names counterpart {group.counterpart!r}, which is not another group of the file",
                                field=f"{group.group}.counterpart")
            pairs.append(Counterpart(group=group.group, counterpart=group.counterpart, source="seeds"))
            continue
        if group.category is not None:
            same = [j for j, other in enumerate(seeds) if j != i and other.category == group.category]
            if same:
                # Several groups of one category: the most similar name where embeddings are given, else the first.
                best = max(same, key=lambda j: (float(similarity[i, j]), -j)) if similarity is not None else same[0]
                pairs.append(Counterpart(group=group.group, counterpart=names[best], source="category",
                                         similarity=None if similarity is None else round(float(similarity[i, best]), 4)))
                continue
        elif similarity is not None and len(seeds) > 1:
            others = [j for j in range(len(seeds)) if j != i]
            if others:
                best = max(others, key=lambda j: (float(similarity[i, j]), -j))
                if similarity[i, best] >= floor:
                    pairs.append(Counterpart(group=group.group, counterpart=names[best], source="similarity",
                                             similarity=round(float(similarity[i, best]), 4)))
                    continue
        if not all(k.lower() in antonym_keywords for k in group.keywords):
            lacking.append(group.group)
    if lacking:
        raise DataError(
            f"no counterpart group for {', '.join(repr(g) for g in lacking)}: give each a category shared with "
            f"another group, a \"counterpart\", or an \"anti\" term for every keyword (group names less similar "
            f"than {floor} to every other group are never paired)",
            field="counterpart",
        )
    return tuple(pairs)
