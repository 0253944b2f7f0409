"""The metadata columns a McBE item records in an export (``domain/export_schema.py``: one Arrow type per name)."""

from __future__ import annotations

MCBE_EXPORT_META: dict[str, str] = {
    "task": "string",
    "bei": "string",
    "category": "string",
    "subtype": "string",
    "file": "string",
    "row": "int64",
    "words": "list<string>",
    "default_sentence": "string",
    "human_score": "float64",
    "skipped": "string",
    "unparseable": "int64",
    "unparseable_replies": "list<string>",
    "explanation": "string",
    "judge_raw": "string",
    "judge_attempts": "string",
    "attempts": "int64",
}
