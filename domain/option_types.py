"""Small pydantic types shared by protocol options (parsed from ``--set k=v`` strings)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import BeforeValidator


def _split_commas(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (int, float)):
        return [value]
    return value


CommaList = Annotated[list[str], BeforeValidator(_split_commas)]
CommaIntList = Annotated[list[int], BeforeValidator(_split_commas)]


def nonempty_subset(name: str, value: list[str], allowed: Sequence[str]) -> list[str]:
    """``value`` without repeats, when it is a non-empty subset of ``allowed``; else a ValueError naming both."""
    unknown = [v for v in value if v not in allowed]
    if unknown or not value:
        raise ValueError(f"{name} must be a non-empty subset of {list(allowed)}, got {value}")
    return list(dict.fromkeys(value))
