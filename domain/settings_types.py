"""Small pydantic types shared by protocol settings (parsed from ``--set k=v`` strings)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator


def _split_commas(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (int, float)):
        return [value]
    return value


CommaList = Annotated[list[str], BeforeValidator(_split_commas)]
CommaIntList = Annotated[list[int], BeforeValidator(_split_commas)]
