"""The library calls: UMAP projections (seeded, one thread) and HDBSCAN labels.

UMAP is deterministic only with ``random_state`` set, which also makes it run on
one thread. At 4,096 points and more UMAP finds neighbours approximately
(NN-descent); the neighbour graph is then computed once and shared by the
clustering projection and the 2-D plot projection.
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
    shared = (None, None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # n_jobs overridden by random_state; small-graph notes
        if plane and n >= UMAP_EXACT_BELOW:
            indices, distances, forest = nearest_neighbors(
                vectors, k, metric, {}, False, np.random.RandomState(seed), low_memory=True, n_jobs=1
            )
            shared = (indices, distances, forest)

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
    description = f"umap(n_neighbors={k}, n_components={dims}, min_dist={min_dist}, metric={metric}, init={init}, random_state={seed}, n_jobs=1)"
    return Projections(reduced, flat, description)


def hdbscan_labels(points: np.ndarray, *, min_cluster_size: int, min_samples: int | None) -> list[int]:
    """sklearn's HDBSCAN labels (-1 = noise); every point is noise when there are fewer than ``min_cluster_size``."""
    from sklearn.cluster import HDBSCAN

    n = points.shape[0]
    if n < max(2, min_cluster_size):
        return [-1] * n
    samples = min(min_samples if min_samples is not None else min_cluster_size, n)
    labels = HDBSCAN(min_cluster_size=min_cluster_size, min_samples=samples, copy=True).fit_predict(points)
    return [int(label) for label in labels]
