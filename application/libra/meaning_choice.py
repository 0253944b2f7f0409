"""The knowledge boundary for masked LMs by choice (``protocol.masked_meaning=choice``; domain/libra/meaning_choice.py).

Every candidate definition of every local word goes to the pseudo-log-likelihood
port in one batched call. A term's comparison records the definition the model
ranked first (as its "definition") and the margin of the official one over the
best other (as its score).
"""

from __future__ import annotations

from typing import Sequence

from culturebias.application.context import RunContext
from culturebias.application.libra.knowledge import KnowledgeBoundaryOutcome, TermComparison, local_vocabulary
from culturebias.domain.errors import ConfigError
from culturebias.domain.libra.knowledge import decide_knowledge_boundary
from culturebias.domain.libra.meaning_choice import choice_text, distractors
from culturebias.domain.libra.options import LibraOptions
from culturebias.domain.libra.triplets import GlossaryEntry, Triplet
from culturebias.domain.requests import PseudoLoglikelihoodRequest
from culturebias.ports.lexicon import Lexicon


def check_by_choice(
    ctx: RunContext, options: LibraOptions, triplets: Sequence[Triplet], glossary: Sequence[GlossaryEntry], lexicon: Lexicon
) -> KnowledgeBoundaryOutcome:
    vocabulary = local_vocabulary(options, triplets, glossary, lexicon)
    to_check = vocabulary.with_definition()
    candidates: list[list[str]] = []
    requests: list[PseudoLoglikelihoodRequest] = []
    for term in to_check:
        assert term.entry is not None
        others = distractors(term.entry, glossary, options.meaning_choices - 1, ctx.seed)
        if not others:
            raise ConfigError(
                "protocol.masked_meaning=choice ranks the official definition against other glossary definitions, "
                f"and the glossary has none besides the one of {term.term!r}: give it at least two terms"
            )
        definitions = [term.entry.definition, *(o.definition for o in others)]
        candidates.append(definitions)
        for definition in definitions:
            text, start, end = choice_text(
                options.meaning_choice_template, term=term.surface, sentence=term.context, definition=definition
            )
            requests.append(PseudoLoglikelihoodRequest(text, start, end))
    results = (
        ctx.pseudo_scorer().pseudo_loglikelihood(requests, description="LIBRA: meanings of local words (masked LM)")
        if requests
        else []
    )
    comparisons: dict[str, TermComparison] = {}
    at = 0
    for term, definitions in zip(to_check, candidates):
        scored = results[at : at + len(definitions)]
        at += len(definitions)
        means = [r.logprob / r.n_tokens if r.n_tokens else float("-inf") for r in scored]
        best = max(range(len(means)), key=lambda i: means[i])
        margin = means[0] - max(means[1:])
        comparisons[term.term] = TermComparison(term.term, definitions[best], margin, margin > 0)
    boundary = decide_knowledge_boundary(
        vocabulary, {t: c.understood for t, c in comparisons.items()}, options.missing_definition
    )
    return KnowledgeBoundaryOutcome(boundary, comparisons)
