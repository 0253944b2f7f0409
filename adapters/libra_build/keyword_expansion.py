"""The default seed expander (PROTOCOLS §4 construction step 2): embedding similarity and association rules.

Candidate terms come from the corpus (``domain.libra_build.terms``); each is
embedded once through the ``TextEmbedder`` port (one batch per call, cached
across calls by text) and scored by cosine to its group's nearest seed. The
rules come from FP-growth (``adapters.libra_build.mlxtend``) over each sentence's term set,
seeds included. Nothing here is random: ``seed`` is accepted for the port and
changes nothing.
"""

from __future__ import annotations

from typing import Callable, Collection, Sequence

import numpy as np

from culturebias.domain.errors import ConfigError
from culturebias.domain.libra_build.component_options import ExpanderOptions
from culturebias.domain.libra_build.expansion import (
    AssociationRule,
    merge_sources,
    rank_by_similarity,
    rules_to_keywords,
    seed_keys_of,
)
from culturebias.domain.libra_build.keywords import ExpandedKeyword, SeedGroup
from culturebias.domain.libra_build.terms import corpus_terms, seeds_in, term_key, tokens
from culturebias.ports.similarity import TextEmbedder

RuleMiner = Callable[..., list[AssociationRule]]  # (transactions, antecedents, *, min_support, min_confidence)


class CachedEmbeddings:
    """Vectors by text: each distinct text goes to the embedder once, in one batch per request."""

    def __init__(self, embedder: TextEmbedder):
        self.embedder = embedder
        self._vectors: dict[str, np.ndarray] = {}
        self.embedded = 0  # texts sent to the embedder so far

    def of(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            vectors = self.embedder.embed(missing)
            if len(vectors) != len(missing):
                raise ConfigError(f"embedder {self.embedder.describe()} returned {len(vectors)} vectors for {len(missing)} texts")
            for text, vector in zip(missing, vectors):
                self._vectors[text] = np.asarray(vector, dtype=np.float64)
            self.embedded += len(missing)
        if not texts:
            return np.zeros((0, 0))
        return np.stack([self._vectors[t] for t in texts])


class CorpusKeywordExpander:
    def __init__(self, options: ExpanderOptions, *, embedder: TextEmbedder | None, rule_miner: RuleMiner | None):
        if "embedding" in options.sources and embedder is None:
            raise ConfigError("keyword expansion by embedding needs an embedder (or sources=association)")
        if "association" in options.sources and rule_miner is None:
            raise ConfigError("keyword expansion by association rules needs a rule miner (or sources=embedding)")
        self.options = options
        self._embeddings = CachedEmbeddings(embedder) if embedder is not None else None
        self._mine = rule_miner

    def describe(self) -> str:
        o = self.options
        parts = []
        for source in o.sources:
            if source == "embedding" and self._embeddings is not None:
                parts.append(
                    f"embedding similarity ({self._embeddings.embedder.describe()}; cosine >= {o.similarity_threshold}, "
                    f"top {o.similarity_top_k} per group)"
                )
            if source == "association":
                parts.append(
                    f"FP-growth association rules seed => term (mlxtend; support >= max({o.min_support}, "
                    f"{o.min_support_count} sentences), confidence >= {o.min_confidence}, lift >= {o.min_lift}, "
                    f"top {o.association_top_k} per group)"
                )
        return (
            f"candidate terms: 1..{o.max_ngram}-grams in >= {o.min_count} sentences, stop words out, "
            f"at most {o.max_candidates}; " + " + ".join(parts)
        )

    def expand(self, sentences: Sequence[str], seeds: Sequence[SeedGroup], *, seed: int = 0) -> list[ExpandedKeyword]:
        o = self.options
        group_seeds = seed_keys_of(seeds)
        every_seed = {s for keys in group_seeds.values() for s in keys}
        terms = corpus_terms(sentences, max_ngram=o.max_ngram, min_count=o.min_count, max_terms=o.max_candidates)
        candidates = [k for k in terms.keys if k not in every_seed]
        surfaces = dict(zip(terms.keys, terms.surfaces))
        per_source: dict[str, list[ExpandedKeyword]] = {}
        if "embedding" in o.sources and candidates:
            per_source["embedding"] = self._by_embedding(candidates, surfaces, seeds, group_seeds)
        if "association" in o.sources and sentences:
            transactions = [
                (found - every_seed) | seeds_in([term_key(w) for w in tokens(text)], every_seed)
                for text, found in zip(sentences, terms.per_sentence)
            ]
            per_source["association"] = self._by_association(transactions, every_seed, surfaces, group_seeds)
        merged = merge_sources(per_source, o.sources, [g.group for g in seeds], exclusive=o.exclusive)
        return self._near_the_seeds(merged, seeds)

    def _by_embedding(self, candidates, surfaces, seeds: Sequence[SeedGroup], group_seeds) -> list[ExpandedKeyword]:
        assert self._embeddings is not None
        # A seed is embedded as the user wrote it (its first spelling in the seed file).
        seed_text: dict[str, str] = {}
        for group in seeds:
            for keyword in group.keywords:
                for key in group_seeds[group.group]:
                    if key == " ".join(term_key(w) for w in tokens(keyword)):
                        seed_text.setdefault(key, keyword)
        seed_keys = list(seed_text)
        texts = [surfaces[c] for c in candidates] + [seed_text[k] for k in seed_keys]
        vectors = self._embeddings.of(texts)
        seed_vectors = dict(zip(seed_keys, vectors[len(candidates) :]))
        return rank_by_similarity(
            candidates,
            [surfaces[c] for c in candidates],
            vectors[: len(candidates)],
            seed_vectors,
            group_seeds,
            threshold=self.options.similarity_threshold,
            top_k=self.options.similarity_top_k,
        )

    def _near_the_seeds(self, found: list[ExpandedKeyword], seeds: Sequence[SeedGroup]) -> list[ExpandedKeyword]:
        """Found terms near their own group's seeds (association: ``association_min_similarity``) and nearer
        to them than to any other group's by ``group_margin``."""
        o = self.options
        if self._embeddings is None or not found or (o.association_min_similarity is None and o.group_margin is None):
            return found
        seed_vectors = {group.group: self._embeddings.of(list(group.keywords)) for group in seeds}
        vectors = self._embeddings.of([k.keyword for k in found])
        kept = []
        for keyword, vector in zip(found, vectors):
            nearest = {group: float(np.max(_cosines(matrix, vector))) for group, matrix in seed_vectors.items()}
            own = nearest.get(keyword.group, -1.0)
            others = max((v for g, v in nearest.items() if g != keyword.group), default=-1.0)
            if keyword.source == "association" and o.association_min_similarity is not None \
                    and own < o.association_min_similarity:
                continue
            if o.group_margin is not None and own - others < o.group_margin:
                continue
            kept.append(keyword)
        return kept

    def _by_association(self, transactions: Sequence[Collection[str]], every_seed, surfaces, group_seeds) -> list[ExpandedKeyword]:
        assert self._mine is not None
        o = self.options
        support = max(o.min_support, o.min_support_count / len(transactions))
        rules = self._mine(transactions, every_seed, min_support=support, min_confidence=o.min_confidence)
        return rules_to_keywords(
            rules, surfaces, group_seeds, min_confidence=o.min_confidence, min_lift=o.min_lift, top_k=o.association_top_k
        )


def _cosines(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    norms = np.maximum(np.linalg.norm(matrix, axis=1) * np.linalg.norm(vector), 1e-12)
    return (matrix @ vector) / norms
