"""LIBRA build (PROTOCOLS §4 construction): the replaceable components of the clean, perturb and review steps.

Expand and cluster are ``ports.dataset_building``; search is fixed (every hit is kept).
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Protocol, Sequence, runtime_checkable

from culturebias.domain.libra_build.build_steps import CleanResult, Hit, PerturbResult
from culturebias.domain.libra_build.keywords import SeedGroup


@runtime_checkable
class DocumentCleaner(Protocol):
    """Step 1: people's names anonymised, bias-irrelevant documents dropped, documents split into sentences."""

    def describe(self) -> str: ...

    def clean(self, documents: Sequence[tuple[str, str]], protected: frozenset[str], *, seed: int = 0) -> CleanResult: ...


@runtime_checkable
class Perturber(Protocol):
    """Step 5: S_p and S_u for every hit; a hit that cannot be perturbed is counted, never guessed."""

    def describe(self) -> str: ...

    def perturb(
        self, hits: Sequence[Hit], seeds: Sequence[SeedGroup], antonyms: Mapping[str, str], *, seed: int = 0
    ) -> PerturbResult: ...


@runtime_checkable
class ReviewSheets(Protocol):
    """Step 6: the sheet a person edits, written (CSV and others) and read back as (row, fields)."""

    def write(self, folder: Path, rows: list[dict[str, str]]) -> list[Path]: ...

    def read(self, path: Path) -> list[tuple[int, dict[str, str]]]: ...


class BuildInputs(Protocol):
    """The build's input files: corpus, seeds and the user's own glossary, each refused with its file and row when bad."""

    def read_corpus(self, path: str | Path, *, text_field: str = "text") -> list[tuple[str, str]]:
        """(document id, text) of every document of a .txt/.jsonl/.csv file or a folder of them."""
        ...

    def read_seeds(self, path: str | Path) -> tuple[list[SeedGroup], dict[str, str]]:
        """The seed groups and the antonyms of a JSON or TOML seeds file."""
        ...

    def read_glossary(self, path: str | Path) -> dict[str, str]:
        """term -> definition of a glossary.jsonl."""
        ...
