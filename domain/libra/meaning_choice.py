"""How a masked LM states a meaning (PROTOCOLS §4, knowledge boundary; ``protocol.masked_meaning=choice``).

A masked LM generates no text, so it cannot write a definition D1. Instead it
ranks definitions: the glossary's official one (D2) and up to k − 1 other
glossary definitions, each written into the same template after the word and
its sentence. Each is scored by the mean pseudo-log-likelihood of the
definition's tokens (a mean, so a longer definition is not penalised for its
length). f(W) = 1 when the official definition ranks strictly first. This is a
recognition test, not a free answer: chance is 1/k, and bbs by this procedure
is not comparable with bbs from generated definitions.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

from culturebias.domain.libra.triplets import GlossaryEntry


def distractors(entry: GlossaryEntry, glossary: Sequence[GlossaryEntry], count: int, seed: int) -> list[GlossaryEntry]:
    """``count`` other glossary entries with another definition, in a fixed pseudo-random order per term and seed."""
    own = entry.definition.strip().casefold()
    others = [e for e in glossary if e.term != entry.term and e.definition.strip().casefold() != own]

    def rank(other: GlossaryEntry) -> str:
        return hashlib.sha256(f"{seed}\0{entry.term}\0{other.term}".encode("utf-8")).hexdigest()

    return sorted(others, key=rank)[:count]


def choice_text(template: str, *, term: str, sentence: str, definition: str) -> tuple[str, int, int]:
    """The template with its slots filled, and the characters of the definition in it."""
    before, after = template.split("{definition}")

    def fill(part: str) -> str:
        return part.replace("{term}", term).replace("{sentence}", sentence)

    prefix, suffix = fill(before), fill(after)
    return prefix + definition + suffix, len(prefix), len(prefix) + len(definition)
