"""The metadata columns a TWBias item records in an export (``domain/export_schema.py``: one Arrow type per name)."""

from __future__ import annotations

TWBIAS_EXPORT_META: dict[str, str] = {
    "axis": "string",
    "specification": "string",
    "origin": "string",
    "reference": "string",
    "prompt_type": "string",
    "sentence_id": "string",
    "file": "string",
    "row": "int64",
    "toxicity": "int64",
    "categories": "list<string>",
}
