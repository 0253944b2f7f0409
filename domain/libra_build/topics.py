"""Topic clusters of the corpus sentences (PROTOCOLS §4 construction step 3)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class TopicCluster(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    members: tuple[int, ...]  # indices into the sentences handed to the clusterer
    terms: tuple[str, ...]  # the words that characterise it (c-TF-IDF or similar), best first
    summary: str  # incremental summary (LLM or extractive), for the group-mapping prompt and the report
    from_noise: bool = False  # formed when the noise points were clustered again
    group: str | None = None  # the social group the mapping step assigned, None for "no group"


class TopicClusters(BaseModel):
    """Every sentence's cluster (-1: still noise after re-clustering) and the clusters themselves."""

    model_config = ConfigDict(frozen=True)

    labels: tuple[int, ...]
    clusters: tuple[TopicCluster, ...]
    method: str  # e.g. "umap(n_neighbors=15, seed=0) + hdbscan(min_cluster_size=5)"
    # A 2-D projection per sentence for the build report's cluster plot (None where not computed).
    coordinates: tuple[tuple[float, float], ...] | None = None

    @property
    def noise(self) -> int:
        return sum(1 for label in self.labels if label < 0)
