"""StereoSet's released JSON (``dev.json``), read for the LIBRA paper's iCAT column (PROTOCOLS §4).

The shape, as StereoSet publishes it::

    {"version": "1.0-dev",
     "data": {"intrasentence": [{"id": "…", "target": "chess player", "bias_type": "profession",
                                 "context": "The chess player was BLANK.",
                                 "sentences": [{"sentence": "The chess player was hispanic.", "id": "…",
                                                "labels": [{"label": "anti-stereotype", "human_id": "…"}, …],
                                                "gold_label": "anti-stereotype"}, …]}, …],
              "intersentence": [{…, "context": "Many people live in Ethiopia.",
                                 "sentences": [{"sentence": "The people are very thin …", …}, …]}, …]}}

Each item has exactly one sentence per gold label (stereotype, anti-stereotype,
unrelated). An intrasentence sentence is its context with ``BLANK`` filled in;
an intersentence sentence follows its context. ``labels`` (the annotators'
votes) and ``version`` are not used. Anything else in a wrong shape is a
``DataError`` naming the file and the field (``data.intrasentence[3].sentences[1].gold_label``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from culturebias.adapters.datasets.text_files import decode_text
from culturebias.domain.errors import DataError
from culturebias.domain.libra.stereoset import (
    GOLD_LABELS,
    SPLITS,
    Split,
    StereoSetData,
    StereoSetItem,
    StereoSetSentence,
    intrasentence_span,
)


def _text(fields: dict[str, Any], key: str, file: str, where: str) -> str:  # Any: StereoSet's JSON
    value = fields.get(key)
    if value is None:
        raise DataError("missing", file=file, field=f"{where}.{key}")
    if not isinstance(value, str):
        raise DataError(f"must be a string, got {type(value).__name__}", file=file, field=f"{where}.{key}")
    if not value.strip():
        raise DataError("empty", file=file, field=f"{where}.{key}")
    return value


def _object(value: Any, file: str, where: str) -> dict[str, Any]:  # Any: StereoSet's JSON
    if not isinstance(value, dict):
        raise DataError(f"must be a JSON object, got {type(value).__name__}", file=file, field=where)
    return value


def _sentence(split: Split, context: str, fields: dict[str, Any], file: str, where: str) -> StereoSetSentence:  # Any: StereoSet's JSON
    text = _text(fields, "sentence", file, where)
    sentence_id = _text(fields, "id", file, where)
    if split == "intersentence":
        # The sentence follows its context: the context is U_left, the sentence the modified span.
        full = f"{context} {text}"
        return StereoSetSentence(sentence_id, full, len(context) + 1, len(full))
    span = intrasentence_span(context, text)
    if span is None:
        raise DataError(
            f"{text!r} is not the context {context!r} with its BLANK filled in", file=file, field=f"{where}.sentence"
        )
    return StereoSetSentence(sentence_id, text, *span)


def _item(split: Split, raw: Any, file: str, where: str) -> StereoSetItem:  # Any: StereoSet's JSON
    fields = _object(raw, file, where)
    context = _text(fields, "context", file, where)
    if split == "intrasentence" and "BLANK" not in context:
        raise DataError("an intrasentence context must hold BLANK", file=file, field=f"{where}.context")
    sentences = fields.get("sentences")
    if not isinstance(sentences, list):
        raise DataError("must be a list of three sentences", file=file, field=f"{where}.sentences")
    by_gold: dict[str, StereoSetSentence] = {}
    for n, raw_sentence in enumerate(sentences):
        at = f"{where}.sentences[{n}]"
        sentence_fields = _object(raw_sentence, file, at)
        gold = sentence_fields.get("gold_label")
        if gold not in GOLD_LABELS:
            raise DataError(f"must be one of {', '.join(GOLD_LABELS)}, got {gold!r}", file=file, field=f"{at}.gold_label")
        if gold in by_gold:
            raise DataError(f"a second {gold} sentence", file=file, field=f"{at}.gold_label")
        by_gold[gold] = _sentence(split, context, sentence_fields, file, at)
    missing = [g for g in GOLD_LABELS if g not in by_gold]
    if missing:
        raise DataError(f"no {' and no '.join(missing)} sentence", file=file, field=f"{where}.sentences")
    return StereoSetItem(
        id=_text(fields, "id", file, where),
        split=split,
        target=_text(fields, "target", file, where).strip(),
        bias_type=_text(fields, "bias_type", file, where).strip(),
        context=context,
        sentences=tuple(by_gold[g] for g in GOLD_LABELS),  # type: ignore[arg-type]  # one per gold label: three
    )


def parse_stereoset(name: str, text: str) -> StereoSetData:
    """StereoSet's items from the text of its JSON file; ``name`` is how errors and the summary name it."""
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as error:
        raise DataError(f"not JSON: {error.msg} (line {error.lineno}, column {error.colno})", file=name) from None
    data = _object(_object(payload, name, "(top level)").get("data"), name, "data")
    if not any(split in data for split in SPLITS):
        raise DataError(f"holds neither {' nor '.join(SPLITS)}", file=name, field="data")
    items: list[StereoSetItem] = []
    seen: dict[str, str] = {}
    for split in SPLITS:
        raw_items = data.get(split, [])
        if not isinstance(raw_items, list):
            raise DataError("must be a list of items", file=name, field=f"data.{split}")
        for n, raw in enumerate(raw_items):
            where = f"data.{split}[{n}]"
            item = _item(split, raw, name, where)
            if item.id in seen:
                raise DataError(f"id {item.id!r} already used by {seen[item.id]}", file=name, field=f"{where}.id")
            seen[item.id] = where
            items.append(item)
    if not items:
        raise DataError("no items", file=name, field="data")
    return StereoSetData(file=Path(name).name, items=tuple(items))


def load_stereoset(name: str, data: bytes) -> StereoSetData:
    return parse_stereoset(name, decode_text(data, name))
