"""Seed expansion's pure part: cosine ranking, association rules to keywords, merging the sources.

Every ordering here is total (score, then the term, then the seed-file order),
so the same inputs always give the same keywords in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from culturebias.domain.array_types import Floats
from culturebias.domain.libra_build.keywords import ExpandedKeyword, SeedGroup
from culturebias.domain.libra_build.terms import contains_phrase, seed_key

# Scores are compared after rounding, so that float noise in the last bits never reorders equal scores.
_SCORE_DECIMALS = 9


def rounded(score: float) -> float:
    return round(float(score), _SCORE_DECIMALS)


def unit_rows(vectors: Floats) -> Floats:
    """Rows scaled to length 1 (a zero row stays zero)."""
    matrix = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: Floats = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return unit


def seed_keys_of(groups: Sequence[SeedGroup]) -> dict[str, list[str]]:
    """Each group's seeds as term keys, in seed-file order, without repeats or empties."""
    return {g.group: list(dict.fromkeys(k for k in (seed_key(s) for s in g.keywords) if k)) for g in groups}


def overlaps_a_seed(term: str, seeds: Sequence[str]) -> bool:
    """A term that holds a seed ("māori community") or is part of one ("young" of "young people")
    finds nothing the seed does not already find (whichever group's seed it is)."""
    words = term.split(" ")
    return any(contains_phrase(words, s.split(" ")) or contains_phrase(s.split(" "), words) for s in seeds)


def rank_by_similarity(
    terms: Sequence[str],
    surfaces: Sequence[str],
    term_vectors: Floats,
    seed_vectors: Mapping[str, Floats],
    group_seeds: Mapping[str, Sequence[str]],
    *,
    threshold: float,
    top_k: int,
) -> list[ExpandedKeyword]:
    """Per group, the terms whose cosine to the group's nearest seed reaches ``threshold``, best ``top_k``."""
    found: list[ExpandedKeyword] = []
    if not terms:
        return found
    every_seed = [s for seeds in group_seeds.values() for s in seeds]
    candidates = unit_rows(term_vectors)
    for group, seeds in group_seeds.items():
        if not seeds:
            continue
        seed_matrix = unit_rows(np.stack([seed_vectors[s] for s in seeds]))
        similarity = candidates @ seed_matrix.T  # terms x seeds
        nearest = similarity.argmax(axis=1)  # first seed on a tie: seed-file order
        best = similarity[np.arange(len(terms)), nearest]
        scored = [
            (rounded(best[i]), terms[i], i)
            for i in range(len(terms))
            if best[i] >= threshold and not overlaps_a_seed(terms[i], every_seed)
        ]
        scored.sort(key=lambda item: (-item[0], item[1]))
        for score, _, i in scored[:top_k]:
            found.append(
                ExpandedKeyword(
                    group=group,
                    keyword=surfaces[i],
                    source="embedding",
                    score=score,
                    evidence=f"cosine {score:.3f} to seed {seeds[int(nearest[i])]!r}",
                )
            )
    return found


@dataclass(frozen=True)
class AssociationRule:
    """``antecedent => consequent`` over sentences (both term keys), with its usual measures."""

    antecedent: str
    consequent: str
    support: float
    confidence: float
    lift: float


def rules_to_keywords(
    rules: Sequence[AssociationRule],
    surfaces: Mapping[str, str],
    group_seeds: Mapping[str, Sequence[str]],
    *,
    min_confidence: float,
    min_lift: float,
    top_k: int,
) -> list[ExpandedKeyword]:
    """Rules seed => term give the term to the seed's group; a term's best rule (confidence, lift, support) speaks for it."""
    every_seed = sorted({s for seeds in group_seeds.values() for s in seeds})
    found: list[ExpandedKeyword] = []
    for group, seeds in group_seeds.items():
        best: dict[str, AssociationRule] = {}
        for rule in rules:
            if rule.antecedent not in seeds or rule.consequent in every_seed:
                continue
            if rule.confidence < min_confidence or rule.lift < min_lift or overlaps_a_seed(rule.consequent, every_seed):
                continue
            current = best.get(rule.consequent)
            if current is None or _rule_order(rule) < _rule_order(current):
                best[rule.consequent] = rule
        ranked = sorted(best.values(), key=lambda r: (_rule_order(r), r.consequent))[:top_k]
        for rule in ranked:
            found.append(
                ExpandedKeyword(
                    group=group,
                    keyword=surfaces.get(rule.consequent, rule.consequent),
                    source="association",
                    score=rounded(rule.confidence),
                    evidence=(
                        f"rule {rule.antecedent!r} => {rule.consequent!r} (support {rule.support:.4f}, "
                        f"confidence {rule.confidence:.3f}, lift {rule.lift:.2f})"
                    ),
                )
            )
    return found


def _rule_order(rule: AssociationRule) -> tuple[float, float, float, str]:
    return (-rounded(rule.confidence), -rounded(rule.lift), -rounded(rule.support), rule.antecedent)


def merge_sources(
    per_source: Mapping[str, Sequence[ExpandedKeyword]], sources: Sequence[str], groups: Sequence[str], *, exclusive: bool
) -> list[ExpandedKeyword]:
    """One keyword per (group, term), from the highest-priority source that found it; evidence of the others appended.

    With ``exclusive`` a term found for several groups stays with one: the earliest
    source, then the higher score, then the group named first in the seed file.
    Output: grouped in seed-file order, within a group by source priority, then score.
    """
    priority = {source: i for i, source in enumerate(sources)}
    group_rank = {group: i for i, group in enumerate(groups)}
    chosen: dict[tuple[str, str], ExpandedKeyword] = {}
    for source in sources:
        for keyword in per_source.get(source, ()):
            key = (keyword.group, keyword.keyword.casefold())
            if key in chosen:
                earlier = chosen[key]
                chosen[key] = earlier.model_copy(update={"evidence": f"{earlier.evidence}; {source}: {keyword.evidence}"})
            else:
                chosen[key] = keyword

    def order(keyword: ExpandedKeyword) -> tuple[int, float, int, str]:
        return (priority[keyword.source], -keyword.score, group_rank[keyword.group], keyword.keyword)

    kept = sorted(chosen.values(), key=order)
    if exclusive:
        owner: dict[str, str] = {}
        for keyword in kept:
            owner.setdefault(keyword.keyword.casefold(), keyword.group)
        kept = [k for k in kept if owner[k.keyword.casefold()] == k.group]
    return sorted(kept, key=lambda k: (group_rank[k.group], priority[k.source], -k.score, k.keyword))
