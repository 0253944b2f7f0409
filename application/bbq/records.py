"""KoBBQ / CBBQ item records: one per question (item × prompt × option order)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Sequence

from culturebias.application.context import RunContext
from culturebias.ports.audit import Audited
from culturebias.application.item_rendering import rendered_prompt, templater_of
from culturebias.domain.audit import ItemRecord
from culturebias.domain.bbq.model import Answer
from culturebias.domain.cbbq.explanations import explanation_of
from culturebias.domain.requests import GenerationRequest, GenerationResult, LoglikelihoodResult
from culturebias.ports.templating import ChatTemplater

if TYPE_CHECKING:
    from culturebias.application.bbq.answering import Question  # which imports this module


def question_id(answer: Answer) -> str:
    """``sample_id|prompt|permutation``: the same identity as a prediction line."""
    return f"{answer.item.sample_id}|{answer.prompt_id}|{answer.permutation}"


def _metadata(question: Question, answer: Answer, mode: str) -> dict[str, Any]:  # Any: JSON metadata
    item = question.item
    shown_letter = None
    if mode != "masked" and answer.chosen is not None and answer.chosen in question.order:  # masked shows no letters
        shown_letter = question.letters[question.order.index(answer.chosen)]
    return {
        "sample_id": item.sample_id,
        "category": item.category,
        "subcategory": item.subcategory,
        "template_id": item.template_id,
        "context_condition": item.context_condition,
        "question_polarity": item.question_polarity,
        "context_polarity": item.context_polarity,
        "label_type": item.label_annotation,
        "prompt_id": answer.prompt_id,
        "permutation": answer.permutation,
        "mode": mode,
        "options": json.dumps(list(item.options), ensure_ascii=False),
        "shown_order": json.dumps(list(question.order)),
        "answer_index": item.answer_index,
        "biased_index": item.biased_index,
        "unknown_index": item.unknown_index,
        "chosen_index": answer.chosen,
        "chosen_letter": shown_letter,
        "invalid_reply": answer.invalid,
    }


def _record(benchmark: str, question: Question, given: Answer, mode: str, **fields: Any) -> ItemRecord:  # Any: ItemRecord's fields
    # An item without a known biased answer (never asked by CBBQ) has no bias class to show.
    known = given.item.biased_index is not None or given.chosen is None or given.chosen == given.item.unknown_index
    return ItemRecord(
        benchmark=benchmark,
        item_id=question_id(given),
        parsed=None if given.chosen is None else given.item.options[given.chosen],
        outcome=given.answer_class.value if known else None,
        correct=given.correct,
        metadata=_metadata(question, given, mode),
        **fields,
    )


def generated_records(
    benchmark: str,
    questions: Sequence[Question],
    prompts: Sequence[str],
    replies: Sequence[GenerationResult],
    answers: Sequence[Answer],
) -> list[ItemRecord]:
    """Generate mode: the rendered prompt, the raw reply, the option parsed from it.

    A question that asks for an explanation (CBBQ Q+Explain) also keeps the question and the explanation in
    its metadata (``question``, ``explanation``): what ``culturebias cbbq review-export`` writes out."""
    records = []
    for q, p, r, a in zip(questions, prompts, replies, answers):
        record = _record(benchmark, q, a, "generate", prompt=p, answer=r.text)
        if q.explains:
            metadata = {**record.metadata, "question": q.item.question, "explanation": explanation_of(r.text)}
            record = record.model_copy(update={"metadata": metadata})
        records.append(record)
    return records


def scored_records(
    benchmark: str,
    questions: Sequence[Question],
    contexts: Sequence[str],
    results: Sequence[LoglikelihoodResult],
    answers: Sequence[Answer],
    prefix: str,
) -> list[ItemRecord]:
    """Likelihood mode: the rendered prompt, each option letter scored after it, the likeliest letter."""
    records = []
    start = 0
    for question, context, answer in zip(questions, contexts, answers):
        n = len(question.letters)
        scores = results[start : start + n]
        start += n
        records.append(
            _record(
                benchmark,
                question,
                answer,
                "likelihood",
                prompt=context,
                texts=[prefix + letter for letter in question.letters],
                loglikelihoods=[None if r.invalid else r.logprob for r in scores],
                answer=answer.raw or None,
            )
        )
    return records


def generation_prompts(templater: ChatTemplater | None, requests: Sequence[GenerationRequest]) -> list[str]:
    return [rendered_prompt(templater, r) for r in requests]


def record_generated(ctx: RunContext, label: str, questions, requests, replies, answers) -> None:
    log = ctx.items if isinstance(ctx, Audited) else None  # a duck-typed test context may keep no audit trail
    if log is not None:
        prompts = generation_prompts(templater_of(ctx), requests)
        log().record(generated_records(label.lower(), questions, prompts, replies, answers))


def record_scored(ctx: RunContext, label: str, questions, contexts, results, answers, prefix: str) -> None:
    log = ctx.items if isinstance(ctx, Audited) else None
    if log is not None:
        log().record(scored_records(label.lower(), questions, contexts, results, answers, prefix))


def masked_records(benchmark: str, questions, requests, results, answers) -> list[ItemRecord]:
    """Masked mode: each option's sentence in dataset order, its pseudo-log-likelihood, the best option."""
    records, start = [], 0
    for question, answer in zip(questions, answers):
        n = len(question.item.options)
        records.append(
            _record(
                benchmark,
                question,
                answer,
                "masked",
                texts=[r.text for r in requests[start : start + n]],
                loglikelihoods=[r.logprob for r in results[start : start + n]],
                # what decides: the mean per token, per option (dataset order)
                scores={f"mean_logprob.{i}": r.logprob / max(1, r.n_tokens) for i, r in enumerate(results[start : start + n])},
                answer=answer.raw or None,
            )
        )
        start += n
    return records


def record_masked(ctx: RunContext, label: str, questions, requests, results, answers) -> None:
    log = ctx.items if isinstance(ctx, Audited) else None
    if log is not None:
        log().record(masked_records(label.lower(), questions, requests, results, answers))
