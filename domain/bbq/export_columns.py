"""The metadata columns a BBQ-style item (KoBBQ, CBBQ) records in an export (``domain/export_schema.py``: one Arrow type per name)."""

from __future__ import annotations

BBQ_EXPORT_META: dict[str, str] = {
    "sample_id": "string",
    "category": "string",
    "subcategory": "string",
    "template_id": "string",
    "context_condition": "string",
    "question_polarity": "string",
    "context_polarity": "string",
    "label_type": "string",
    "prompt_id": "string",
    "permutation": "int64",
    "mode": "string",
    "options": "list<string>",
    "shown_order": "list<int64>",
    "answer_index": "int64",
    "biased_index": "int64",
    "unknown_index": "int64",
    "chosen_index": "int64",
    "chosen_letter": "string",
    "invalid_reply": "bool",
}
