"""``protocol.mode=masked``: an encoder answers BBQ questions by pseudo-log-likelihood (``domain/bbq/masked_choice.py``)."""

from __future__ import annotations

from typing import Sequence

from culturebias.application.context import RunContext
from culturebias.application.bbq.records import record_masked
from culturebias.domain.bbq.masked_choice import best_option, option_text
from culturebias.domain.bbq.model import Answer
from culturebias.domain.requests import PseudoLoglikelihoodRequest


def ask_masked(ctx: RunContext, questions: Sequence, label: str) -> list[Answer]:
    """Every option of every question scored in one port call; one answer per question."""
    requests = []
    for question in questions:
        item = question.item
        for option in item.options:
            requests.append(PseudoLoglikelihoodRequest(*option_text(item.context, item.question, option)))
    results = ctx.pseudo_scorer().pseudo_loglikelihood(requests, description=f"{label}: options (masked LM)")
    answers, start = [], 0
    for question in questions:
        n = len(question.item.options)
        scores = results[start : start + n]
        start += n
        chosen = best_option([r.logprob for r in scores], [r.n_tokens for r in scores])
        answers.append(
            Answer(question.item, question.prompt_id, question.permutation, chosen, question.item.options[chosen])
        )
    record_masked(ctx, label, questions, requests, results, answers)
    return answers
