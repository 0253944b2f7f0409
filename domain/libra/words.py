"""Words of the triplets, and which of them are local (PROTOCOLS §4, knowledge boundary).

``V`` is the set of words of the triplets; ``V_w`` the words of a general
lexicon *and their inflections*; ``V' = V \\ V_w``. The lexicon itself is a port
(a set of known spellings); this module only decides which spellings of a word
to look up: the word as written, without diacritics (dictionaries write
"Maori", text writes "Māori"), without a possessive, and the bases of regular
English inflections ("walked" → "walk", "jandals" → "jandal"). A hyphenated
word is general when the whole or every part is.

A local word that belongs to a glossary phrase ("whenua" in "tangata whenua")
is checked as that phrase, since the glossary defines the phrase.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

from culturebias.domain.libra.triplets import GlossaryEntry

# Letters (any script, macrons included) with inner apostrophes or hyphens.
_WORD = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*")
_APOSTROPHES = ("'", "’")


def words(text: str) -> list[str]:
    """The words of ``text`` as written, in order."""
    return _WORD.findall(text)


def strip_diacritics(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


def match_key(word: str) -> str:
    """Case- and diacritic-insensitive key, used to match words against the glossary."""
    return strip_diacritics(word.casefold()).replace("’", "'")


def _without_possessive(word: str) -> str:
    for apostrophe in _APOSTROPHES:
        if word.endswith(apostrophe + "s"):
            return word[:-2]
        if word.endswith("s" + apostrophe):
            return word[:-1]
    return word


def inflection_bases(word: str) -> list[str]:
    """Candidate base forms of a regularly inflected English word (lower case in, lower case out)."""
    bases: list[str] = []

    def add(base: str) -> None:
        if len(base) >= 2 and base not in bases:
            bases.append(base)

    if word.endswith("ies") and len(word) > 4:
        add(word[:-3] + "y")
    if word.endswith("es") and len(word) > 3:
        add(word[:-2])
    if word.endswith("s") and not word.endswith("ss") and len(word) > 2:
        add(word[:-1])
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            stem = word[: -len(suffix)]
            add(stem)
            add(stem + "e")
            if len(stem) >= 2 and stem[-1] == stem[-2]:
                add(stem[:-1])  # stopped → stop
            if suffix == "ed" and stem.endswith("i"):
                add(stem[:-1] + "y")  # carried → carry
    return bases


def lexicon_forms(word: str) -> list[str]:
    """Every spelling under which ``word`` may appear in a general lexicon."""
    lowered = word.casefold().replace("’", "'")
    forms: list[str] = []
    for base in (lowered, strip_diacritics(lowered)):
        for candidate in (base, _without_possessive(base)):
            for form in (candidate, *inflection_bases(candidate)):
                if form not in forms:
                    forms.append(form)
    return forms


def all_lexicon_forms(texts: Iterable[str]) -> set[str]:
    """The spellings to look up for every word (and hyphen part) of ``texts``, for one batched lookup."""
    forms: set[str] = set()
    for text in texts:
        for word in words(text):
            forms.update(lexicon_forms(word))
            if "-" in word:
                for part in word.split("-"):
                    forms.update(lexicon_forms(part))
    return forms


def is_general(word: str, known: Callable[[str], bool]) -> bool:
    """True when the word, one of its inflection bases, or every hyphen part is in the lexicon."""
    if any(known(form) for form in lexicon_forms(word)):
        return True
    parts = [p for p in word.split("-") if p]
    return len(parts) > 1 and all(any(known(form) for form in lexicon_forms(p)) for p in parts)


@dataclass(frozen=True)
class GlossaryIndex:
    """Glossary spellings as tuples of word keys, longest first, for phrase matching."""

    phrases: tuple[tuple[tuple[str, ...], GlossaryEntry], ...]

    @staticmethod
    def build(entries: Sequence[GlossaryEntry]) -> "GlossaryIndex":
        phrases: dict[tuple[str, ...], GlossaryEntry] = {}
        for entry in entries:
            for spelling in entry.spellings():
                key = tuple(match_key(w) for w in words(spelling))
                if key and key not in phrases:
                    phrases[key] = entry
        ordered = sorted(phrases.items(), key=lambda item: -len(item[0]))
        return GlossaryIndex(tuple(ordered))


def _word_matches(word: str, key: str) -> bool:
    forms = {match_key(f) for f in lexicon_forms(word)}
    return key in forms


@dataclass(frozen=True, slots=True)
class LocalTerm:
    """One element of V': a glossary term, or a local word the glossary lacks."""

    key: str  # the glossary term, or the word's match key when the glossary lacks it
    entry: GlossaryEntry | None
    surface: str  # as written in the sentence


def local_terms(
    text: str,
    known: Callable[[str], bool],
    glossary: GlossaryIndex,
    glossary_always_local: bool = False,
) -> list[LocalTerm]:
    """The local terms of one sentence, in order of appearance, each once.

    A glossary phrase found in the sentence is a local term when one of its words
    is outside the lexicon (or always, with ``glossary_always_local``, for local
    senses of general words such as "dairy" or "chilly bin"). A local word in no
    glossary phrase is a term of its own, without a definition.
    """
    tokens = words(text)
    covered = [False] * len(tokens)
    found: dict[str, LocalTerm] = {}
    spans: list[tuple[int, int, GlossaryEntry]] = []
    for key, entry in glossary.phrases:
        n = len(key)
        for start in range(len(tokens) - n + 1):
            if any(covered[start : start + n]):
                continue
            if all(_word_matches(tokens[start + i], key[i]) for i in range(n)):
                spans.append((start, start + n, entry))
                for i in range(start, start + n):
                    covered[i] = True
    local = [not is_general(token, known) for token in tokens]
    items: list[tuple[int, LocalTerm]] = []
    for start, end, entry in spans:
        if glossary_always_local or any(local[start:end]):
            items.append((start, LocalTerm(entry.term, entry, " ".join(tokens[start:end]))))
    for i, token in enumerate(tokens):
        if local[i] and not covered[i]:
            items.append((i, LocalTerm(match_key(token), None, token)))
    for _, term in sorted(items, key=lambda item: item[0]):
        found.setdefault(term.key, term)
    return list(found.values())


def known_from(lexicon_hits: set[str] | Mapping[str, object]) -> Callable[[str], bool]:
    return lambda form: form in lexicon_hits
