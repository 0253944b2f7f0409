"""LIBRA's test cases (PROTOCOLS §4): triplets and the glossary of official definitions.

A triplet keeps the stereotyped sentence split around the target-group span ω:
``S = left + target + right``; the anti-stereotyped and unrelated sentences swap
ω for ``anti_stereotype`` (M_p) and ``unrelated`` (M_u).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from culturebias.domain.libra.stereoset import StereoSetData

SentenceKind = Literal["stereotyped", "anti_stereotyped", "unrelated"]
SENTENCE_KINDS: tuple[SentenceKind, ...] = ("stereotyped", "anti_stereotyped", "unrelated")


@dataclass(frozen=True, slots=True)
class Triplet:
    id: str
    left: str  # U_left
    target: str  # ω, the words naming the target social group
    right: str  # U_right
    anti_stereotype: str  # M_p
    unrelated: str  # M_u
    group: str
    category: str

    def filler(self, kind: SentenceKind) -> str:
        """The text that stands between ``left`` and ``right`` in the sentence of ``kind``."""
        if kind == "stereotyped":
            return self.target
        if kind == "anti_stereotyped":
            return self.anti_stereotype
        return self.unrelated

    def sentence(self, kind: SentenceKind) -> str:
        return self.left + self.filler(kind) + self.right

    def sentences(self) -> dict[SentenceKind, str]:
        return {kind: self.sentence(kind) for kind in SENTENCE_KINDS}


@dataclass(frozen=True, slots=True)
class GlossaryEntry:
    """An official definition of a local word or phrase (D2 of the knowledge boundary)."""

    term: str
    definition: str
    variants: tuple[str, ...] = ()  # other spellings or inflections, e.g. without macrons
    source: str | None = None

    def spellings(self) -> tuple[str, ...]:
        return (self.term, *self.variants)


@dataclass(frozen=True)
class LibraDataset:
    triplets: tuple[Triplet, ...]
    glossary: tuple[GlossaryEntry, ...] = ()
    files: tuple[str, ...] = field(default=())  # where the data came from, for messages
    stereoset: StereoSetData | None = None  # StereoSet, for the paper's iCAT column (PROTOCOLS §4)
