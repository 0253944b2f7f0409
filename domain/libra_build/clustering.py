"""Topic clustering's pure part: cluster sizes, label merging, c-TF-IDF terms, extractive summaries."""

from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

import numpy as np

from culturebias.domain.array_types import Floats
from culturebias.domain.libra_build.expansion import rounded, unit_rows


def auto_min_cluster_size(n: int) -> int:
    """HDBSCAN's smallest cluster when the user sets none: 5, growing with the corpus to 50 (n // 200)."""
    return max(5, min(50, n // 200))


def merge_noise_labels(labels: Sequence[int], noise_labels: Sequence[int]) -> tuple[list[int], set[int]]:
    """First-pass labels with the noise points' second-pass labels numbered after them.

    ``noise_labels`` is aligned with the first pass's noise points, in order. Returns
    the labels and the ids of the clusters formed from the noise.
    """
    merged = list(labels)
    offset = max(merged, default=-1) + 1
    noise_points = [i for i, label in enumerate(merged) if label < 0]
    if len(noise_points) != len(noise_labels):
        raise ValueError(f"{len(noise_labels)} second-pass labels for {len(noise_points)} noise points")
    formed = set()
    for i, label in zip(noise_points, noise_labels):
        if label >= 0:
            merged[i] = offset + label
            formed.add(offset + label)
    return merged, formed


def members_by_cluster(labels: Sequence[int]) -> dict[int, list[int]]:
    """Cluster id -> its sentence indices (ascending), clusters in ascending id; noise left out."""
    members: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        if label >= 0:
            members.setdefault(label, []).append(i)
    return dict(sorted(members.items()))


def ctfidf_terms(
    sentence_terms: Sequence[Sequence[str]], clusters: dict[int, list[int]], top: int
) -> dict[int, tuple[str, ...]]:
    """The ``top`` terms of each cluster by class-based TF-IDF (BERTopic's c-TF-IDF):
    ``tf(t, c) · log(1 + A / f(t))``, tf normalised by the cluster's term count, ``A`` the
    mean term count per cluster, ``f(t)`` the term's count over every cluster. Ties: alphabetical."""
    counts = {cid: Counter(t for i in members for t in sentence_terms[i]) for cid, members in clusters.items()}
    frequency: Counter[str] = Counter()
    for counter in counts.values():
        frequency.update(counter)
    if not frequency:
        return {cid: () for cid in clusters}
    average = sum(frequency.values()) / len(counts)
    out = {}
    for cid, counter in counts.items():
        total = sum(counter.values()) or 1
        scored = [(rounded(c / total * math.log(1 + average / frequency[t])), t) for t, c in counter.items()]
        scored.sort(key=lambda item: (-item[0], item[1]))
        out[cid] = tuple(t for _, t in scored[:top])
    return out


def nearest_to_centroid(vectors: Floats, members: Sequence[int]) -> list[int]:
    """``members`` ordered by cosine to their centroid, nearest first (ties: lower index first)."""
    if not len(members):
        return []
    unit = unit_rows(vectors[list(members)])
    centroid = unit.mean(axis=0)
    norm = np.linalg.norm(centroid)
    similarity: list[float] = (unit @ (centroid / norm) if norm > 0 else np.zeros(len(members))).tolist()
    return [members[j] for j in sorted(range(len(members)), key=lambda j: (-rounded(similarity[j]), members[j]))]


def extractive_summary(sentences: Sequence[str], ordered_members: Sequence[int], k: int) -> str:
    """The ``k`` distinct sentences nearest the centroid, nearest first, joined."""
    chosen: list[str] = []
    for i in ordered_members:
        text = sentences[i].strip()
        if text and text not in chosen:
            chosen.append(text)
            if len(chosen) == k:
                break
    return " ".join(chosen)


def principal_plane(vectors: Floats) -> list[tuple[float, float]]:
    """A 2-D projection on the first two principal axes (signs fixed), for corpora too small for UMAP."""
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.shape[0] == 0:
        return []
    centred = matrix - matrix.mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    axes = axes[:2]
    for row in axes:  # an axis's sign is arbitrary: point it so its largest component is positive
        if row[np.argmax(np.abs(row))] < 0:
            row *= -1
    projected = centred @ axes.T
    if projected.shape[1] < 2:
        projected = np.hstack([projected, np.zeros((projected.shape[0], 2 - projected.shape[1]))])
    return [(float(x), float(y)) for x, y in projected]
