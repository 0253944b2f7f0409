"""LIBRA item records: one per triplet, its three sentences and their L(S), L(S_p), L(S_u)."""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from culturebias.application.context import RunContext
from culturebias.ports.audit import Audited
from culturebias.application.libra.knowledge import KnowledgeBoundaryOutcome
from culturebias.domain.audit import ItemRecord
from culturebias.domain.libra.metrics import TripletLikelihood
from culturebias.domain.libra.triplets import SENTENCE_KINDS, Triplet


def _finite(value: float) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def libra_records(
    model_type: str, triplets: Sequence[Triplet], likelihoods: Sequence[TripletLikelihood], valid: Mapping[str, bool]
) -> list[ItemRecord]:
    records = []
    for triplet, scores in zip(triplets, likelihoods):
        values = [_finite(getattr(scores, kind)) for kind in SENTENCE_KINDS]  # a likelihood dataclass, by sentence kind
        likeliest = None
        scored = [v for v in values if v is not None]
        if len(scored) == len(values):
            likeliest = SENTENCE_KINDS[max(range(len(scored)), key=lambda k: scored[k])]
        records.append(
            ItemRecord(
                benchmark="libra",
                item_id=triplet.id,
                prompt=triplet.left if model_type == "causal" else None,
                texts=[triplet.sentence(kind) for kind in SENTENCE_KINDS],
                loglikelihoods=values,
                parsed=likeliest,
                outcome=(likeliest if valid.get(triplet.id, False) else "invalid"),
                metadata={
                    "kind": "triplet",
                    "category": triplet.category,
                    "group": triplet.group,
                    "target": triplet.target,
                    "anti_stereotype": triplet.anti_stereotype,
                    "unrelated": triplet.unrelated,
                    "model_type": model_type,
                    "valid": bool(valid.get(triplet.id, False)),
                    "stereotype_over_anti": (
                        None if values[0] is None or values[1] is None else values[0] > values[1]
                    ),
                },
            )
        )
    return records


def local_word_records(boundary: KnowledgeBoundaryOutcome) -> list[ItemRecord]:
    """The knowledge boundary: one record per local word, the model's definition and the verdict on it."""
    kb = boundary.boundary
    records = []
    for term in kb.vocabulary.terms.values():
        comparison = boundary.comparisons.get(term.term)
        understood = kb.understood.get(term.term)
        records.append(
            ItemRecord(
                benchmark="libra",
                item_id=f"word|{term.term}",
                texts=[term.context],
                answer=comparison.model_definition if comparison else None,
                outcome="no_definition" if understood is None else "understood" if understood else "not_understood",
                scores={
                    "similarity": comparison.score if comparison else None,
                    "nearest_similarity": comparison.nearest_score if comparison else None,
                },
                metadata={
                    "kind": "local_word",
                    "term": term.term,
                    "as_written": term.surface,
                    "official_definition": term.entry.definition if term.entry else None,
                    "understood": understood,
                    "triplets": len(term.triplet_ids),
                    "nearest_term": comparison.nearest_term if comparison else None,
                },
            )
        )
    return records


def record_libra(
    ctx: RunContext, model_type: str, triplets: Sequence[Triplet], likelihoods: Sequence[TripletLikelihood],
    valid: Mapping[str, bool], boundary: KnowledgeBoundaryOutcome | None = None,
) -> None:
    """``boundary``: the knowledge boundary's outcome, None where it was not checked."""
    log = ctx.items if isinstance(ctx, Audited) else None
    if log is not None:
        words = local_word_records(boundary) if boundary is not None else []
        log().record([*libra_records(model_type, triplets, likelihoods, valid), *words])
