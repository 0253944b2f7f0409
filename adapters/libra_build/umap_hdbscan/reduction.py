"""The library calls: UMAP projections (seeded, one thread) and HDBSCAN labels.

UMAP is deterministic only with ``random_state`` set, which also makes it run on
one thread. The neighbour graph is computed once and shared by the clustering
projection and the 2-D plot projection: below 4,096 points exactly, here, with
one matrix product per block of rows (umap-learn's own exact path calls its
metric once per pair from Python, quadratic and ~5 s at 2,500 points); from
4,096 on approximately, by umap-learn's NN-descent, as umap-learn itself does.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

UMAP_EXACT_BELOW = 4096  # umap-learn's own switch from exact to approximate neighbours


@dataclass(frozen=True)
class Projections:
    reduced: np.ndarray  # n x n_components, for clustering
    plane: np.ndarray | None  # n x 2, for the plot
    description: str


def umap_projections(
    vectors: np.ndarray, *, n_neighbors: int, n_components: int, min_dist: float, metric: str, seed: int, plane: bool
) -> Projections:
    import umap
    from umap.umap_ import nearest_neighbors

    n = vectors.shape[0]
    k = max(2, min(n_neighbors, n - 1))
    dims = max(2, min(n_components, n - 2))
    # Spectral initialisation needs more points than dimensions + 1; a tiny corpus starts from a seeded random layout.
    init = "spectral" if n > dims + 4 else "random"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # n_jobs overridden by random_state; no search index for transform()
        if n >= UMAP_EXACT_BELOW:
            shared = nearest_neighbors(vectors, k, metric, {}, False, np.random.RandomState(seed), low_memory=True, n_jobs=1)
        else:
            shared = (*exact_neighbours(vectors, k, metric), None)

        def fit(components: int) -> np.ndarray:
            model = umap.UMAP(
                n_neighbors=k,
                n_components=components,
                min_dist=min_dist,
                metric=metric,
                init=init,
                random_state=seed,
                n_jobs=1,
                precomputed_knn=shared,
            )
            return np.asarray(model.fit_transform(vectors), dtype=np.float64)

        reduced = fit(dims)
        flat = (reduced if dims == 2 else fit(2)) if plane else None
    neighbours = "exact" if n < UMAP_EXACT_BELOW else "NN-descent"
    description = (
        f"umap(n_neighbors={k} ({neighbours}), n_components={dims}, min_dist={min_dist}, metric={metric}, "
        f"init={init}, random_state={seed}, n_jobs=1)"
    )
    return Projections(reduced, flat, description)


def exact_neighbours(vectors: np.ndarray, k: int, metric: str, block: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Each point's ``k`` nearest points (itself first, at distance 0), as umap-learn's precomputed_knn wants them:
    cosine distance 1 - cos, or euclidean. Ties inside the ``k``: the lower index first."""
    points = np.asarray(vectors, dtype=np.float32)
    if metric == "cosine":
        norms = np.linalg.norm(points, axis=1, keepdims=True)
        points = np.divide(points, norms, out=np.zeros_like(points), where=norms > 0)
    squared = (points * points).sum(axis=1)
    n = points.shape[0]
    indices = np.empty((n, k), dtype=np.int32)
    distances = np.empty((n, k), dtype=np.float32)
    for start in range(0, n, block):
        rows = slice(start, min(start + block, n))
        product = points[rows] @ points.T
        if metric == "cosine":
            block_distances = np.maximum(1.0 - product, 0.0)
        else:
            block_distances = np.sqrt(np.maximum(squared[rows, None] - 2.0 * product + squared[None, :], 0.0))
        own = np.arange(rows.start, rows.stop)
        block_distances[own - start, own] = -1.0  # itself first, whatever the rounding
        nearest = np.argpartition(block_distances, k - 1, axis=1)[:, :k] if k < n else np.tile(np.arange(n), (len(own), 1))
        picked = np.take_along_axis(block_distances, nearest, axis=1)
        order = np.take_along_axis(nearest, np.lexsort((nearest, picked), axis=1), axis=1)
        indices[rows] = order
        distances[rows] = np.maximum(np.take_along_axis(block_distances, order, axis=1), 0.0)
    return indices, distances


def hdbscan_labels(points: np.ndarray, *, min_cluster_size: int, min_samples: int | None) -> list[int]:
    """sklearn's HDBSCAN labels (-1 = noise); every point is noise when there are fewer than ``min_cluster_size``."""
    from sklearn.cluster import HDBSCAN

    n = points.shape[0]
    if n < max(2, min_cluster_size):
        return [-1] * n
    samples = min(min_samples if min_samples is not None else min_cluster_size, n)
    labels = HDBSCAN(min_cluster_size=min_cluster_size, min_samples=samples, copy=True).fit_predict(points)
    return [int(label) for label in labels]
