"""Typed options of the default expand and cluster components (``open_expander`` / ``open_clusterer``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from culturebias.domain.option_types import CommaList, nonempty_subset

EXPANSION_SOURCES = ("embedding", "association")


class ExpanderOptions(BaseModel):
    """Seed expansion by embedding similarity and by FP-growth association rules."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Which sources run, in priority order: a term both find for a group keeps the first one's source and score.
    sources: CommaList = Field(default_factory=lambda: list(EXPANSION_SOURCES))
    # Candidate terms: words and n-grams up to this many words, in at least ``min_count`` sentences.
    max_ngram: int = Field(2, ge=1, le=4)
    min_count: int = Field(2, ge=1)
    # Only the most frequent candidates are embedded (bounds the embedding cost on a large corpus).
    max_candidates: int | None = Field(5000, ge=1)
    # Embedding: cosine to the nearest seed of the group.
    similarity_threshold: float = Field(0.6, ge=-1.0, le=1.0)
    similarity_top_k: int = Field(15, ge=1)
    # Association rules seed => term over the sentences' term sets.
    min_support: float = Field(0.002, gt=0.0, le=1.0)
    min_support_count: int = Field(3, ge=1)  # support is at least this many sentences, whatever min_support says
    min_confidence: float = Field(0.3, ge=0.0, le=1.0)
    min_lift: float = Field(1.5, ge=0.0)
    association_top_k: int = Field(15, ge=1)
    # A term an association rule finds is kept only if it is also this similar (cosine to the group's nearest
    # seed) where an embedder is configured: co-occurrence alone takes a corpus's stock phrases ("residents
    # claimed", "food") for group words (issue 27). None keeps every rule's term.
    association_min_similarity: float | None = Field(0.35, ge=-1.0, le=1.0)
    # A found term (either source) must be this much closer to its group's nearest seed than to any other
    # group's, where an embedder is configured: "parents", "residents", "community" are near every group and
    # name none (issue 27). None keeps them.
    group_margin: float | None = Field(0.1, ge=0.0, le=2.0)
    # A term found for several groups goes to one only (source priority, then score, then seed-file order).
    exclusive: bool = True

    @field_validator("sources")
    @classmethod
    def _known_sources(cls, value: list[str]) -> list[str]:
        return nonempty_subset("sources", value, EXPANSION_SOURCES)


class ClustererOptions(BaseModel):
    """UMAP + HDBSCAN topic clustering, noise re-clustered, summaries and the group mapping."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # "umap": HDBSCAN on a UMAP projection (the paper's method). "none": HDBSCAN on the embeddings themselves
    # (for low-dimensional embedders, or to take UMAP's placement of small topics out of a comparison).
    reduction: Literal["umap", "none"] = "umap"
    # UMAP: n_neighbors is lowered to n-1 on a small corpus.
    n_neighbors: int = Field(15, ge=2)
    n_components: int = Field(5, ge=2)
    min_dist: float = Field(0.0, ge=0.0)
    metric: Literal["cosine", "euclidean"] = "cosine"
    # HDBSCAN: None = max(5, n // 200), at most 50.
    min_cluster_size: int | None = Field(None, ge=2)
    min_samples: int | None = Field(None, ge=1)
    # The noise points are clustered once more with this smaller size (None = max(3, min_cluster_size // 2)).
    recluster_noise: bool = True
    noise_min_cluster_size: int | None = Field(None, ge=2)
    # Below this many sentences no UMAP/HDBSCAN runs: every sentence is one cluster.
    min_sentences: int = Field(10, ge=2)
    # A 2-D UMAP projection (sharing the neighbour graph) for the build report's plot.
    plot_coordinates: bool = True
    # Cluster terms by c-TF-IDF.
    top_terms: int = Field(10, ge=1)
    max_ngram: int = Field(2, ge=1, le=4)
    # Summaries: the sentences nearest the centroid; "llm" folds them in, chunk by chunk, through the generator.
    summary: Literal["extractive", "llm"] = "extractive"
    summary_sentences: int = Field(3, ge=1)
    summary_chunks: int = Field(2, ge=1)  # LLM summary: how many chunks of ``summary_sentences`` are folded in
    # Group mapping: "auto" asks the generator when there is one, else keyword overlap.
    mapping: Literal["auto", "llm", "keywords"] = "auto"
    # Stop asking the generator after this many unparseable replies in a row (the rest map by keywords).
    max_failures: int = Field(3, ge=1)
    generator_batch_size: int = Field(8, ge=1)
    max_new_tokens: int = Field(8, ge=1)
    summary_max_new_tokens: int = Field(80, ge=8)
    # Keyword-overlap mapping: a group needs this share of the cluster's sentences holding one of its keywords.
    min_keyword_share: float = Field(0.2, ge=0.0, le=1.0)
