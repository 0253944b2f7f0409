"""Topic clusters of the corpus sentences (PROTOCOLS §4 construction step 3)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class GeneratorUse(BaseModel):
    """How a step's questions to the generator went: a reply that cannot be parsed falls back and is counted."""

    model_config = ConfigDict(frozen=True)

    asked: int = 0  # requests sent
    parsed: int = 0  # replies used
    unparseable: int = 0  # replies not used (the fallback answered instead)
    not_asked: int = 0  # items answered by the fallback after the generator was given up on
    gave_up: bool = False  # it failed too many times in a row, so it was asked no more


class TopicCluster(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    members: tuple[int, ...]  # indices into the sentences handed to the clusterer
    terms: tuple[str, ...]  # the words that characterise it (c-TF-IDF or similar), best first
    summary: str  # incremental summary (LLM or extractive), for the group-mapping prompt and the report
    from_noise: bool = False  # formed when the noise points were clustered again
    group: str | None = None  # the social group the mapping step assigned, None for "no group"
    # What decided ``group``: the generator's reply, or keyword overlap (no generator, or its reply was unusable).
    mapped_by: Literal["llm", "keywords"] | None = None


class TopicClusters(BaseModel):
    """Every sentence's cluster (-1: still noise after re-clustering) and the clusters themselves."""

    model_config = ConfigDict(frozen=True)

    labels: tuple[int, ...]
    clusters: tuple[TopicCluster, ...]
    method: str  # e.g. "umap(n_neighbors=15, seed=0) + hdbscan(min_cluster_size=5)"
    # A 2-D projection per sentence for the build report's cluster plot (None where not computed).
    coordinates: tuple[tuple[float, float], ...] | None = None
    # The generator's use for the group mapping and for LLM summaries (None where it was not asked).
    mapping_use: GeneratorUse | None = None
    summary_use: GeneratorUse | None = None

    @property
    def noise(self) -> int:
        return sum(1 for label in self.labels if label < 0)
