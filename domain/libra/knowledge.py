"""The knowledge boundary (PROTOCOLS §4): local words, f(W), bbs and invalid triplets.

For each local term W the model's definition in context (D1) is compared with
the glossary's official one (D2), giving f(W) ∈ {0, 1}. A triplet holding a
term with f = 0 is invalid and left out of lms and JSD.

A local word the glossary does not define cannot be checked. By default
(``missing_definition="skip"``) it is left out of bbs and does not invalidate
its triplets: such words are most often names, places or typing errors rather
than local vocabulary, and each is counted and listed in the summary. With
``"invalid"`` it counts as not understood (f = 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Literal, Mapping, Sequence

import numpy as np

from culturebias.domain.libra.triplets import SENTENCE_KINDS, GlossaryEntry, Triplet
from culturebias.domain.libra.words import GlossaryIndex, local_terms

MissingDefinition = Literal["skip", "invalid"]


@dataclass(frozen=True)
class LocalTermOccurrences:
    """A local term, the sentence its meaning is asked in, and the triplets holding it."""

    term: str
    entry: GlossaryEntry | None
    surface: str  # as first written
    context: str  # the first stereotyped sentence holding it, else the first S_p, else the first S_u
    triplet_ids: tuple[str, ...]


@dataclass(frozen=True)
class LocalVocabulary:
    terms: dict[str, LocalTermOccurrences]  # V', by term
    by_triplet: dict[str, tuple[str, ...]]  # triplet id → its local terms

    def with_definition(self) -> list[LocalTermOccurrences]:
        return [t for t in self.terms.values() if t.entry is not None]

    def without_definition(self) -> list[LocalTermOccurrences]:
        return [t for t in self.terms.values() if t.entry is None]


def find_local_vocabulary(
    triplets: Sequence[Triplet],
    known: Callable[[str], bool],
    glossary: Sequence[GlossaryEntry],
    glossary_always_local: bool = False,
) -> LocalVocabulary:
    index = GlossaryIndex.build(glossary)
    # term → (rank of the sentence kind, entry, surface, sentence); a stereotyped
    # sentence is the preferred context, the unrelated one (often nonsense) the last resort.
    first: dict[str, tuple[int, GlossaryEntry | None, str, str]] = {}
    holders: dict[str, list[str]] = {}
    by_triplet: dict[str, tuple[str, ...]] = {}
    for triplet in triplets:
        keys: list[str] = []
        for rank, kind in enumerate(SENTENCE_KINDS):
            sentence = triplet.sentence(kind)
            for term in local_terms(sentence, known, index, glossary_always_local):
                if term.key not in first or rank < first[term.key][0]:
                    first[term.key] = (rank, term.entry, term.surface, sentence)
                if term.key not in keys:
                    keys.append(term.key)
        by_triplet[triplet.id] = tuple(keys)
        for key in keys:
            holders.setdefault(key, []).append(triplet.id)
    terms = {
        key: LocalTermOccurrences(key, entry, surface, context, tuple(holders[key]))
        for key, (_, entry, surface, context) in first.items()
    }
    return LocalVocabulary(terms, by_triplet)


@dataclass(frozen=True)
class KnowledgeBoundary:
    """f(W) per checked term; which triplets it invalidates."""

    vocabulary: LocalVocabulary
    understood: dict[str, bool]  # f(W) for every term that counts towards bbs
    unchecked: tuple[str, ...] = ()  # terms left out of bbs (no definition, policy "skip")
    notes: tuple[str, ...] = field(default=())

    def misunderstood(self, triplet_id: str) -> list[str]:
        return [t for t in self.vocabulary.by_triplet.get(triplet_id, ()) if self.understood.get(t) is False]

    def is_valid(self, triplet_id: str) -> bool:
        return not self.misunderstood(triplet_id)

    def understood_over(self, triplet_ids: Iterable[str]) -> list[bool]:
        """f(W) of every checked term found in the given triplets, each term once."""
        seen: dict[str, bool] = {}
        for triplet_id in triplet_ids:
            for term in self.vocabulary.by_triplet.get(triplet_id, ()):
                if term in self.understood and term not in seen:
                    seen[term] = self.understood[term]
        return list(seen.values())


def decide_knowledge_boundary(
    vocabulary: LocalVocabulary,
    compared: Mapping[str, bool],
    missing_definition: MissingDefinition = "skip",
) -> KnowledgeBoundary:
    """Combine the comparisons of D1 with D2 (``compared``, by term) with the missing-definition policy."""
    understood: dict[str, bool] = {}
    unchecked: list[str] = []
    for term in vocabulary.terms.values():
        if term.entry is None:
            if missing_definition == "invalid":
                understood[term.term] = False
            else:
                unchecked.append(term.term)
            continue
        if term.term not in compared:
            raise KeyError(f"no comparison for the local term {term.term!r}")
        understood[term.term] = bool(compared[term.term])
    return KnowledgeBoundary(vocabulary, understood, tuple(unchecked))


def cosine_similarity(a: Sequence[float], b: Sequence[float]) -> float:
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y / norm) if norm > 0 else 0.0
