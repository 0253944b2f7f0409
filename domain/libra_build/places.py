"""A gazetteer of places for the LIBRA build's clean step: the places a text names, which are not people's names.

Local places are part of a local stereotype (LIBRA §3), so the anonymisation of step 1 (PROTOCOLS §4) must
take people's names only. ``PlaceGazetteer`` finds the places of a gazetteer in a text, macrons or not
("Ōpōtiki", "Opotiki"), either apostrophe ("Hawke's Bay", "Hawke’s Bay"), several words at once ("Palmerston
North", "Bay of Plenty"), always capitalised as written. A place that is also a person's name (Levin, Gore,
Nelson) counts only after a place word ("near Levin"), so "Nelson said" is still a person. The gazetteer's
text (adapters/libra_build/data/nz_places.txt for New Zealand) is read by the adapter; this module is pure.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

# Words before a place that make an ambiguous one (a place that is also a person's name) a place.
PLACE_WORDS = frozenset(
    "in near around at to from of outside into towards toward across through via nearby around about".split()
)
AMBIGUOUS_MARK = " *"  # a gazetteer line ending so: a place that is also a person's name
_WORD_CHAR = r"[\w\u0304]"
_PREVIOUS_WORD = re.compile(r"(\w+)\W*$")


def fold(text: str) -> str:
    """Lower case without macrons (or any other accent) and with one apostrophe: the form places match in."""
    decomposed = unicodedata.normalize("NFD", text.replace("’", "'").replace("‘", "'"))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


def _letter(ch: str, first: bool) -> str:
    """One letter of a place name: its cases (the first letter a capital only), a vowel with or without a macron
    (precomposed or combining)."""
    base = fold(ch)
    cases = [base.upper()] if first else [base, base.upper()]
    options = []
    for case in cases:
        options.append(re.escape(case))
        if base in "aeiou":
            options += [unicodedata.normalize("NFC", case + "\u0304"), case + "\u0304"]
    return "(?:" + "|".join(options) + ")"


def _pattern(name: str) -> str:
    """A regex for ``name`` as a text may write it: macrons or not, either apostrophe, any run of spaces."""
    parts = []
    for i, ch in enumerate(name):
        if ch in "'’":
            parts.append("['’]")
        elif ch.isspace():
            parts.append(r"\s+")
        elif ch.isalpha():
            parts.append(_letter(ch, first=i == 0))
        else:
            parts.append(re.escape(ch))
    return "".join(parts)


class PlaceGazetteer:
    """The places of a gazetteer, found in texts (longest name first, whole words only)."""

    def __init__(self, names: Iterable[str], ambiguous: Iterable[str] = ()):
        self.names = tuple(sorted({n.strip() for n in names if n.strip()}, key=lambda n: (-len(n), n)))
        self.ambiguous = frozenset(fold(n) for n in ambiguous)
        self._folded = frozenset(fold(n) for n in self.names)
        alternatives = "|".join(_pattern(n) for n in self.names) or r"(?!x)x"
        self._regex = re.compile(rf"(?<!{_WORD_CHAR})(?:{alternatives})(?!{_WORD_CHAR})")

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> PlaceGazetteer:
        """From a gazetteer file's lines: one name a line, ``#`` comments, `` *`` marking an ambiguous one."""
        names, ambiguous = [], []
        for raw in lines:
            line = raw.split("#", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
            if not line.strip():
                continue
            if line.endswith(AMBIGUOUS_MARK):
                line = line[: -len(AMBIGUOUS_MARK)].rstrip()
                ambiguous.append(line)
            names.append(line.strip())
        return cls(names, ambiguous)

    def __len__(self) -> int:
        return len(self.names)

    def knows(self, name: str) -> bool:
        return fold(name) in self._folded

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where ``text`` names a place: (start, end) of each, in order; an ambiguous one only after a place word."""
        found = []
        for match in self._regex.finditer(text):
            if fold(match.group()) in self.ambiguous:
                before = _PREVIOUS_WORD.search(text[: match.start()])
                if before is None or before.group(1).lower() not in PLACE_WORDS:
                    continue
            found.append(match.span())
        return found


def covered(span: tuple[int, int], places: Iterable[tuple[int, int]]) -> bool:
    """Whether every word of ``span`` lies inside one of ``places`` (so the span names a place, not a person)."""
    start, end = span
    return any(s <= start and end <= e for s, e in places)
