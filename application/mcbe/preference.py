"""PC, preference computation: variance of the sentence NLLs across substitutions (PROTOCOLS §3)."""

from __future__ import annotations

import math

from culturebias.application.context import RunContext
from culturebias.application.mcbe.outcome import TaskOutcome, preference_eligible
from culturebias.domain.mcbe.instances import BEI
from culturebias.domain.mcbe.metrics import mean_nll, preference_score
from culturebias.domain.mcbe.options import McBEOptions
from culturebias.domain.mcbe.summary import PCItem
from culturebias.domain.requests import LoglikelihoodRequest


def pc_text(bei: BEI, word: str, options: McBEOptions) -> str:
    return bei.scenario(word) if options.pc_text == "context_sentence" else bei.filled(word)


def preference_computation(ctx: RunContext, beis: list[BEI], options: McBEOptions) -> TaskOutcome:
    outcome = TaskOutcome("pc")
    eligible = preference_eligible(beis, options.preference_skip, outcome)
    # An empty context: the adapter prepends BOS where the tokenizer adds one, so the
    # mean NLL over the continuation is the LM loss over the whole sentence.
    requests = [LoglikelihoodRequest("", pc_text(bei, word, options)) for bei in eligible for word in bei.words]
    results = ctx.scorer().loglikelihood(requests, description="McBE PC: sentence NLLs") if requests else []
    decay = options.pc_rate
    position = 0
    for bei in eligible:
        chunk = results[position : position + len(bei.words)]
        position += len(bei.words)
        nlls = [mean_nll(r.logprob, r.n_tokens) for r in chunk]
        lost = sum(1 for r in chunk if r.invalid)
        if lost:  # no valid score came back for a sentence: the BEI has no preference, not a made-up one
            outcome.count("pc_invalid_replies", lost, category=bei.category)
            outcome.items[bei.item_id] = PCItem(nlls=nlls, score=None, skipped="the backend got no valid score for a sentence")
            continue
        if not all(math.isfinite(x) for x in nlls):
            outcome.count("pc_skipped_no_tokens", category=bei.category)
            outcome.items[bei.item_id] = PCItem(nlls=nlls, score=None, skipped="a sentence had no scored token")
            continue
        result = preference_score(nlls, decay)
        outcome.add_score(bei, result.score)
        outcome.items[bei.item_id] = PCItem(
            nlls=list(result.nlls),
            n_tokens=[r.n_tokens for r in chunk],
            variance=result.variance,
            score=result.score,
        )
    outcome.counts["pc_sentences_scored"] = len(requests)
    if outcome.counts.get("pc_invalid_replies"):
        outcome.notes.append(
            f"PC: {outcome.counts['pc_invalid_replies']} sentence score request(s) got no valid reply from the backend "
            "after its retries; their BEIs are left out of the PC scores"
        )
    return outcome
