"""The knowledge-boundary stage: find local words, ask the model for their meaning, compare.

Talks only to ports: a Lexicon (V_w), the recorded Generator (D1), and either a
TextEmbedder (cosine of D1 and D2 against a threshold) or the Judge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from culturebias.application.context import RunContext
from culturebias.domain.libra.judging import JUDGE_REMINDER
from culturebias.domain.libra.options import LibraOptions
from culturebias.domain.libra.knowledge import (
    KnowledgeBoundary,
    LocalTermOccurrences,
    LocalVocabulary,
    cosine_similarity,
    decide_knowledge_boundary,
    find_local_vocabulary,
)
from culturebias.domain.libra.triplets import GlossaryEntry, Triplet
from culturebias.domain.libra.words import all_lexicon_forms, known_from
from culturebias.domain.requests import ChatMessage, GenerationParams, GenerationRequest
from culturebias.ports.judging import JudgeRequest
from culturebias.ports.lexicon import Lexicon
from culturebias.ports.similarity import TextEmbedder


@dataclass
class TermComparison:
    term: str
    model_definition: str
    score: float | None  # cosine similarity, or the judge's number (None: no valid number)
    understood: bool
    # embedding comparison: the glossary definition nearest to the model's (its term and cosine), whichever term it is
    nearest_term: str | None = None
    nearest_score: float | None = None


@dataclass(frozen=True)
class NearestDefinition:
    term: str  # the glossary term whose definition is nearest to the model's
    score: float  # its cosine
    margin: float  # cosine with the term's own definition minus the highest with any other term's (inf: no other)


def nearest_definitions(
    vectors: Sequence[Sequence[float]], owners: Sequence[str], glossary: Sequence[GlossaryEntry], embedder: TextEmbedder
) -> list[NearestDefinition]:
    """For each vector (a model's definition of ``owners[k]``), the glossary's nearest definition and the margin
    of the owner's own definition over every other term's."""
    definitions = embedder.embed([entry.definition for entry in glossary]) if glossary else []
    found = []
    for vector, owner in zip(vectors, owners):
        scores = [cosine_similarity(vector, other) for other in definitions]
        own = max((s for s, e in zip(scores, glossary) if e.term == owner), default=float("nan"))
        others = [s for s, e in zip(scores, glossary) if e.term != owner]
        best = max(range(len(scores)), key=scores.__getitem__) if scores else None
        margin = own - max(others) if others else float("inf")
        found.append(NearestDefinition(glossary[best].term if best is not None else "", scores[best] if best is not None else float("nan"), margin))
    return found


def embedding_match(similarity: float, nearest: NearestDefinition, options: LibraOptions) -> bool:
    """The cosine reaches the threshold and, unless ``nearest_margin`` is null, the term's own definition is the
    nearest by at least that margin (0: nearest): a definition closer to another word's meaning is refused."""
    if similarity < options.similarity_threshold:
        return False
    return options.nearest_margin is None or nearest.margin >= options.nearest_margin


@dataclass
class KnowledgeBoundaryOutcome:
    boundary: KnowledgeBoundary
    comparisons: dict[str, TermComparison]
    judge_failures: int = 0
    notes: list[str] = field(default_factory=list)
    invalid_replies: int = 0  # definition requests the backend got no valid reply to (after its retries)


def _fill(template: str, **slots: str) -> str:
    # str.format would trip over braces inside definitions or sentences.
    for name, value in slots.items():
        template = template.replace("{" + name + "}", value)
    return template


def definition_request(options: LibraOptions, term: LocalTermOccurrences, params: GenerationParams) -> GenerationRequest:
    prompt = _fill(options.definition_prompt, term=term.surface, sentence=term.context)
    return GenerationRequest.chat([ChatMessage("user", prompt)], params)


def judge_request(options: LibraOptions, term: LocalTermOccurrences, entry: GlossaryEntry, proposed: str) -> JudgeRequest:
    prompt = _fill(options.judge_prompt, term=term.surface, official=entry.definition, proposed=proposed)
    return JudgeRequest(messages=(ChatMessage("user", prompt),), low=0.0, high=1.0, reminder=JUDGE_REMINDER)


def local_vocabulary(
    options: LibraOptions, triplets: Sequence[Triplet], glossary: Sequence[GlossaryEntry], lexicon: Lexicon
) -> LocalVocabulary:
    """V': the triplets' words outside the lexicon (one batched lookup), with their glossary entries."""
    texts = [sentence for t in triplets for sentence in t.sentences().values()]
    hits = lexicon.known(sorted(all_lexicon_forms(texts)))
    return find_local_vocabulary(
        triplets, known_from(hits), glossary, glossary_always_local=options.local_words == "lexicon+glossary"
    )


def check_knowledge_boundary(
    ctx: RunContext,
    options: LibraOptions,
    triplets: Sequence[Triplet],
    glossary: Sequence[GlossaryEntry],
    lexicon: Lexicon,
    embedder: TextEmbedder | None,
) -> KnowledgeBoundaryOutcome:
    vocabulary = local_vocabulary(options, triplets, glossary, lexicon)
    to_check = vocabulary.with_definition()
    entries = [t.entry for t in to_check if t.entry is not None]  # all of them: the terms with a definition
    comparisons: dict[str, TermComparison] = {}
    judge_failures = 0
    invalid: set[int] = set()
    if to_check:
        answers = ctx.generator().generate(
            [definition_request(options, term, ctx.generation_params(options.definition_max_tokens)) for term in to_check],
            description="LIBRA: meanings of local words",
        )
        # An invalid reply is no definition at all: never compared, never a similarity of 0.0.
        invalid = {i for i, answer in enumerate(answers) if answer.invalid}
        proposed = [answer.text.strip() for answer in answers]
        asked = [i for i in range(len(to_check)) if i not in invalid]
        if embedder is not None:
            vectors = embedder.embed([proposed[i] for i in asked] + [entries[i].definition for i in asked]) if asked else []
            # Shown beside the verdict: which glossary meaning the model's definition is closest to (it may be another word's).
            owners = [to_check[i].term for i in asked]
            nearest = nearest_definitions(vectors[: len(asked)], owners, glossary, embedder) if asked else []
            for position, i in enumerate(asked):
                term = to_check[i]
                if not proposed[i]:  # no definition: cosine 0, no nearest meaning (as before the nearest rule)
                    comparisons[term.term] = TermComparison(term.term, "", 0.0, 0.0 >= options.similarity_threshold)
                    continue
                similarity = cosine_similarity(vectors[position], vectors[len(asked) + position])
                near = nearest[position]
                comparisons[term.term] = TermComparison(
                    term.term, proposed[i], similarity, embedding_match(similarity, near, options), near.term, near.score
                )
        else:
            verdicts = ctx.judge().judge(
                [judge_request(options, to_check[i], entries[i], proposed[i]) for i in asked]
            ) if asked else []
            for i, verdict in zip(asked, verdicts):
                term = to_check[i]
                if verdict.value is None:
                    judge_failures += 1
                understood = verdict.value is not None and verdict.value >= options.judge_threshold
                comparisons[term.term] = TermComparison(term.term, proposed[i], verdict.value, understood)
        for i in sorted(invalid):
            comparisons[to_check[i].term] = TermComparison(to_check[i].term, "", None, False)
    boundary = decide_knowledge_boundary(
        vocabulary, {t: c.understood for t, c in comparisons.items()}, options.missing_definition
    )
    notes = []
    if judge_failures:
        notes.append(
            f"the judge gave no valid number for {judge_failures} local word(s); they count as not understood (f = 0)"
        )
    if invalid:
        notes.append(
            f"the model gave no valid reply to {len(invalid)} definition request(s) after the backend's retries "
            "(counted in invalid_replies); those local words have no score and count as not understood (f = 0)"
        )
    return KnowledgeBoundaryOutcome(boundary, comparisons, judge_failures, notes, invalid_replies=len(invalid))
