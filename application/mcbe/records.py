"""McBE item records: one per (BEI, task), from the per-BEI results the tasks hand back."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

from culturebias.application.context import RunContext
from culturebias.ports.audit import Audited
from culturebias.application.item_rendering import rendered_prompt, templater_of
from culturebias.domain.audit import ItemRecord
from culturebias.domain.mcbe.instances import BEI, McBEDataset
from culturebias.domain.mcbe.options import McBEOptions
from culturebias.domain.mcbe.summary import BAItem, BSItem, McBEItem, PCItem, SCItem, SSItem
from culturebias.domain.requests import GenerationRequest
from culturebias.ports.templating import ChatTemplater


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def _base(bei: BEI, task: str) -> dict[str, Any]:  # Any: ItemRecord's fields
    return {
        "benchmark": "mcbe",
        "item_id": f"{bei.item_id}|{task}",
    }


def _meta(bei: BEI, task: str) -> dict[str, Any]:  # Any: JSON metadata
    return {
        "task": task,
        "bei": bei.item_id,
        "category": bei.category,
        "subtype": bei.subtype,
        "file": bei.source,
        "row": bei.row,
        "words": json.dumps(list(bei.words), ensure_ascii=False),
        "default_sentence": bei.default_sentence,
        "human_score": bei.score,
    }


def _pc(bei: BEI, item: PCItem, options: McBEOptions) -> ItemRecord:
    from culturebias.application.mcbe.preference import pc_text

    nlls = [_number(x) for x in item.nlls]
    counts = item.n_tokens or []
    logprobs = [None if n is None or k is None else -n * k for n, k in zip(nlls, counts)] if counts else []
    known = [(n, w) for n, w in zip(nlls, bei.words) if n is not None]
    return ItemRecord(
        **_base(bei, "pc"),
        texts=[pc_text(bei, word, options) for word in bei.words],
        loglikelihoods=logprobs,
        parsed=min(known)[1] if known else None,  # the likeliest substitution (lowest mean NLL)
        outcome="skipped" if item.skipped else "scored",
        scores={**{f"nll.{w}": n for w, n in zip(bei.words, nlls)}, "variance": _number(item.variance), "score": _number(item.score)},
        metadata={**_meta(bei, "pc"), "skipped": item.skipped},
    )


def _sc(bei: BEI, item: SCItem, options: McBEOptions, subcategories: list[str], templater: ChatTemplater | None) -> ItemRecord:
    from culturebias.application.mcbe.classification import sc_text

    conversation = options.prompts.classification(sc_text(bei, options), subcategories)  # the run's first prompt set
    return ItemRecord(
        **_base(bei, "sc"),
        prompt=rendered_prompt(templater, GenerationRequest.chat(conversation)),
        answer=item.reply,
        parsed=", ".join(item.named) or None,
        outcome="correct" if item.correct else "incorrect",
        correct=item.correct,
        metadata=_meta(bei, "sc"),
    )


def _ss(bei: BEI, item: SSItem) -> ItemRecord:
    return ItemRecord(
        **_base(bei, "ss"),
        texts=[bei.scenario(word) for word in bei.words],
        parsed=item.choices,  # per ordered pair of words, "?" = unparseable
        outcome="scored",
        scores={**{f"wins.{w}": float(n) for w, n in item.wins.items()}, "variance": _number(item.variance), "score": _number(item.score)},
        metadata={
            **_meta(bei, "ss"),
            "unparseable": item.unparseable,
            "unparseable_replies": json.dumps(item.unparseable_replies, ensure_ascii=False),
        },
    )


def _ba(bei: BEI, item: BAItem, options: McBEOptions, templater: ChatTemplater | None) -> ItemRecord:
    criteria = item.criteria.model_dump()
    return ItemRecord(
        **_base(bei, "ba"),
        prompt=rendered_prompt(templater, GenerationRequest.chat(options.prompts.analysis(bei))),
        answer=item.analysis,
        outcome="skipped" if item.score is None else "scored",
        scores={**{f"criterion.{k}": _number(v) for k, v in criteria.items()}, "score": _number(item.score)},
        metadata={
            **_meta(bei, "ba"),
            "explanation": bei.explanation,
            "judge_raw": json.dumps(item.judge_raw.model_dump(), ensure_ascii=False),
            "judge_attempts": json.dumps(item.judge_attempts.model_dump()),
        },
    )


def _bs(bei: BEI, item: BSItem, options: McBEOptions, templater: ChatTemplater | None) -> ItemRecord:
    return ItemRecord(
        **_base(bei, "bs"),
        prompt=rendered_prompt(templater, GenerationRequest.chat(options.prompts.scoring(bei))),
        answer=item.reply,
        parsed=None if item.rating is None else f"{item.rating:g}",
        outcome="invalid" if item.rating is None else "rated",
        scores={"rating": _number(item.rating), "human": _number(item.human), "error": _number(item.error), "score": _number(item.score)},
        metadata={**_meta(bei, "bs"), "attempts": item.attempts},
    )


def mcbe_records(
    ctx: RunContext, beis: Sequence[BEI], items: Mapping[str, McBEItem], options: McBEOptions, dataset: McBEDataset
) -> list[ItemRecord]:
    """``items``: the summary's per-BEI details (``McBEItem`` by BEI id)."""
    templater = templater_of(ctx)
    records = []
    for bei in beis:
        item = items.get(bei.item_id)
        if item is None:
            continue
        if item.pc is not None:
            records.append(_pc(bei, item.pc, options))
        if item.sc is not None:
            records.append(_sc(bei, item.sc, options, dataset.subcategories(bei.category), templater))
        if item.ss is not None:
            records.append(_ss(bei, item.ss))
        if item.ba is not None:
            records.append(_ba(bei, item.ba, options, templater))
        if item.bs is not None:
            records.append(_bs(bei, item.bs, options, templater))
    return records


def record_mcbe(
    ctx: RunContext, beis: Sequence[BEI], items: Mapping[str, McBEItem], options: McBEOptions, dataset: McBEDataset
) -> None:
    log = ctx.items if isinstance(ctx, Audited) else None
    if log is not None:
        log().record(mcbe_records(ctx, beis, items, options, dataset))
