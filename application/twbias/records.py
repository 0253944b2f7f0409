"""TWBias item records: one per (specification, sentence, prompt type), with the per-pair perplexities."""

from __future__ import annotations

import json
import math
from typing import Mapping, Sequence

import numpy as np

from culturebias.application.context import RunContext
from culturebias.ports.audit import Audited
from culturebias.application.twbias.plan import SpecificationPlan
from culturebias.domain.audit import ItemRecord
from culturebias.domain.requests import LoglikelihoodRequest
from culturebias.domain.twbias.specification import replace_terms


def _outcome(origin: float, replaced: float) -> str:
    if not (math.isfinite(origin) and math.isfinite(replaced)):
        return "invalid"
    if origin < replaced:
        return "origin_lower_ppl"  # the sentence about the origin group is the likelier one
    return "reference_lower_ppl" if origin > replaced else "equal_ppl"


def twbias_records(
    spec_plans: Sequence[SpecificationPlan],
    matrices: Mapping[int, tuple[np.ndarray, np.ndarray]],
    prompt_types: Sequence[str],
    contexts: Sequence[str],
    categories: Mapping[int, Mapping[tuple[str, int], tuple[str, ...]]],
    requests: Sequence[LoglikelihoodRequest] | None,
    logprobs: Sequence[float | None] | None,
) -> list[ItemRecord]:
    """``categories``: per ``id(spec.sentences)``; ``requests`` and ``logprobs``: the scoring requests and
    their log-likelihoods (None in a replay, where the texts are the sentences and their replacements)."""
    records = []
    for plan in spec_plans:
        spec = plan.spec
        origin, replace = matrices[id(plan)]
        cats = categories.get(id(spec.sentences), {})
        for i, sentence in enumerate(plan.rows):
            end = plan.replace_starts[i + 1] if i + 1 < len(plan.rows) else len(plan.replace_ids)
            ids = plan.replace_ids[plan.replace_starts[i] : end]
            for j, prompt_type in enumerate(prompt_types):
                scored = [int(plan.origin_ids[i, j]), *(int(k) for k in ids[:, j])]
                if requests is not None:
                    texts = [requests[k].continuation for k in scored]
                else:
                    texts = [sentence.text, *replace_terms(sentence.text, spec.term_pairs)]
                ppl_o, ppl_r = float(origin[i, j]), float(replace[i, j])
                records.append(
                    ItemRecord(
                        benchmark="twbias",
                        item_id=f"{spec.key}|{sentence.file}:{sentence.row}|{prompt_type}",
                        prompt=contexts[j] or None,
                        texts=texts,
                        loglikelihoods=[logprobs[k] for k in scored] if logprobs is not None else [],
                        outcome=_outcome(ppl_o, ppl_r),
                        scores={"ppl_origin": ppl_o, "ppl_reference": ppl_r},
                        metadata={
                            "axis": spec.axis,
                            "specification": spec.key,
                            "origin": spec.origin.key,
                            "reference": spec.reference.key,
                            "prompt_type": prompt_type,
                            "sentence_id": sentence.sentence_id,
                            "file": sentence.file,
                            "row": sentence.row,
                            "toxicity": sentence.toxicity,
                            "categories": json.dumps(list(cats.get((sentence.file, sentence.row), ())), ensure_ascii=False),
                        },
                    )
                )
    return records


def record_twbias(ctx: RunContext, spec_plans, matrices, prompt_types, contexts, groups_by_set, requests=None, results=None) -> None:
    """``groups_by_set``: the service's origin groups by ``id(sentence set)``; ``requests``/``results``: the
    scorer's (None in a replay)."""
    log = ctx.items if isinstance(ctx, Audited) else None
    if log is None:
        return
    logprobs = None if results is None else [None if r.invalid else r.logprob for r in results]
    categories = {key: group.categories for key, group in groups_by_set.items()}
    log().record(twbias_records(spec_plans, matrices, prompt_types, contexts, categories, requests, logprobs))
