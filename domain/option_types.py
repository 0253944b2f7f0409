"""Small pydantic types shared by protocol options (parsed from ``--set k=v`` strings)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def option_list(options: Mapping[str, object], name: str) -> list[str] | None:
    """``options[name]`` as texts (given as a comma-separated text or a list); None when it is not set."""
    value = options.get(name)
    if value is None:
        return None
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{name} must be a comma-separated text or a list, got {value!r}")
    return [str(v).strip() for v in value]
