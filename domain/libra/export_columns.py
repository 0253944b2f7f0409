"""The metadata columns a LIBRA item records in an export (``domain/export_schema.py``: one Arrow type per name)."""

from __future__ import annotations

LIBRA_EXPORT_META: dict[str, str] = {
    "kind": "string",
    "category": "string",
    "group": "string",
    "target": "string",
    "anti_stereotype": "string",
    "unrelated": "string",
    "model_type": "string",
    "valid": "bool",
    "stereotype_over_anti": "bool",
    "term": "string",
    "as_written": "string",
    "official_definition": "string",
    "understood": "bool",
    "triplets": "int64",
    "nearest_term": "string",
}
