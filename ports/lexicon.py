"""A general lexicon of a language (LIBRA's V_w): which spellings are ordinary words."""

from __future__ import annotations

from typing import Iterable, Protocol, runtime_checkable


@runtime_checkable
class Lexicon(Protocol):
    def describe(self) -> str:
        """Which word list this is (package, version, language, threshold)."""
        ...

    def known(self, forms: Iterable[str]) -> set[str]:
        """The given lower-case spellings that are words of the lexicon (one batched lookup)."""
        ...
