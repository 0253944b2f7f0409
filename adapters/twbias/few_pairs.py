"""The few-pairs flag of a TWBias group as its tables and figures show it (PROTOCOLS §1.5)."""

from __future__ import annotations


def few_words(flag: str | None) -> str:
    """A group's flag in short: "few pairs: n = 3, low power" ('' when not flagged)."""
    return flag.split(" (", 1)[0] if flag else ""
