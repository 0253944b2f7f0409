"""Iwi, hapū, marae, kura and organisations that the LIBRA build's clean step keeps (issue 36: people's names only).

Local collectives are part of a local stereotype (LIBRA §3) as places are, and none of them is a person's name,
so a span that one of these names is never replaced by ``[NAME]``. Three kinds, each counted by its rule in
build_report.json's ``names_by_rule``:

- ``kept_iwi``: an iwi or hapū of the shipped list (adapters/libra_build/data/nz_iwi.txt, after Te Puni Kōkiri's
  iwi list and Te Kāhui Māngai), or a name that opens with Ngāti / Ngāi / Ngā or with (Te) Rūnanga o,
  followed by capitalised words ("Ngāti Hine", "Te Rūnanga o Ngāi Tahu", "Ngāi Te Rangi").
- ``kept_marae_kura``: a marae ("Ōrākei Marae", "Te Tii marae") and a kura, kōhanga reo, wharekura or wānanga
  ("Te Kura Kaupapa Māori o Hoani Waititi", "Te Kōhanga Reo o Mangere", "Te Wānanga o Aotearoa", "Te Kura").
- ``kept_organisation``: capitalised words that end in an organisation word ("Waikato District Council",
  "Massey University"), or open with one and go on with "of" ("University of Auckland", "Ministry of Social
  Development"); an organisation of the shipped list (adapters/libra_build/data/nz_organisations.txt:
  Fonterra, Air New Zealand, Te Papa, ...); an all-capitals acronym (ACC, IRD).

Matching ignores macrons (precomposed or combining), so "Ngati Porou" and "Ngāti Porou" are one iwi. A
possessive ends a run of capitalised words, so "Aroha's School" keeps "School" alone and "Aroha" is still a
person; a given name of the name list ends an iwi pattern's run after its first word ("Ngāti Porou Hemi said"). This module is pure: the adapter reads the lists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from culturebias.domain.libra_build.names import GIVEN_NAMES
from culturebias.domain.libra_build.places import PlaceGazetteer

KEPT_IWI, KEPT_MARAE_KURA, KEPT_ORGANISATION = "kept_iwi", "kept_marae_kura", "kept_organisation"

# Words an organisation's name ends in (or opens with, followed by "of": "University of Otago").
ORGANISATION_WORDS = frozenset("""
    Council Councils Trust Trusts Board Boards Ltd Limited Inc Incorporated Corporation Corp Company Holdings
    Group Partners Partnership University Polytechnic Institute Academy School Schools College Kindergarten
    Preschool Kōhanga Wharekura Wānanga Rūnanga Club Clubs Hospital Hospitals Clinic Surgery Pharmacy Church
    Churches Parish Cathedral Mosque Temple Synagogue Mission Ministry Ministries Department Commission Commissioner
    Authority Agency Service Services Office Court Tribunal Police Union Unions Association Society Federation League
    Foundation Fund Charity Network Centre Center Committee Chamber Party Bank Bureau Museum Library Gallery Radio
    Television Herald Times Press Airline Airlines Airways Energy Health Forum Collective Cooperative Co-op
    Supermarket Supermarkets Store Stores Iwi Hapū Kāhui
""".split())

_UPPER = "A-ZĀĒĪŌŪ"
_MACRON = "\u0304"
# A capitalised word, without a possessive or any apostrophe ("Hawke's" gives "Hawke", and the run ends there).
_CAP = rf"[{_UPPER}][\w{_MACRON}-]*"
# Small words inside a Māori name: "Ngāti Kahungunu ki Wairarapa", "Te Whānau-ā-Apanui", "Te Uri o Hau".
_LINK = r"(?:o|a|ā|a\u0304|ki|i|te|me)"
# Capitalised words, small words between them, ending in a capitalised word.
_RUN = rf"{_CAP}(?:\s+(?:{_LINK}\s+)*{_CAP})*"
_BEFORE = rf"(?<![\w{_MACRON}'’])"
_AFTER = rf"(?![\w{_MACRON}])"


def _m(text: str) -> str:
    """``text`` as a regex with each vowel matching with or without a macron (precomposed or combining)."""
    out = []
    for ch in text:
        base = {"ā": "a", "ē": "e", "ī": "i", "ō": "o", "ū": "u",
                "Ā": "A", "Ē": "E", "Ī": "I", "Ō": "O", "Ū": "U"}.get(ch, ch)
        if base in "aeiouAEIOU":
            macron = {"a": "ā", "e": "ē", "i": "ī", "o": "ō", "u": "ū",
                      "A": "Ā", "E": "Ē", "I": "Ī", "O": "Ō", "U": "Ū"}[base]
            out.append(f"(?:{macron}|{base}{_MACRON}?)")
        elif ch == " ":
            out.append(r"\s+")
        else:
            out.append(re.escape(ch))
    return "".join(out)


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(_m(w) for w in sorted(words, key=lambda w: (-len(w), w)))


# "Kāi Tahu" and "Kāti Māmoe" are on the list: "Kai" and "Kati" are also given names ("Kai Walker said").
_IWI_HEADS = ("Ngāti", "Ngāi", "Ngā", "Te Rūnanga o", "Te Rūnanga a", "Te Rūnanga ā", "Rūnanga o",
              "Te Rūnanga-ā-Iwi o", "Te Rūnanga-a-Iwi o")
_IWI = re.compile(rf"{_BEFORE}(?:{_alternatives(_IWI_HEADS)})\s+(?P<run>{_RUN}){_AFTER}")
_RUN_WORD = re.compile(rf"[\w{_MACRON}-]+")
# Not "Kura" alone: it is also a given name ("Kura Tautahi said").
_KURA_HEADS = ("Te Kura Kaupapa Māori", "Kura Kaupapa Māori", "Te Kura", "Te Kōhanga Reo", "Kōhanga Reo",
               "Te Wharekura", "Te Whare Wānanga", "Te Wānanga")
_KURA = re.compile(rf"{_BEFORE}(?:{_alternatives(_KURA_HEADS)})(?:\s+(?:{_LINK}\s+)*{_CAP})*{_AFTER}")
_MARAE = re.compile(rf"{_BEFORE}{_RUN}\s+[Mm]{_m('arae')}{_AFTER}")
_ORG_WORD = rf"(?:{_alternatives(ORGANISATION_WORDS)})"
_ORGANISATION = re.compile(
    rf"{_BEFORE}(?:(?:{_RUN}\s+)?{_ORG_WORD}(?:\s+(?:of|for)(?:\s+(?:the|and))?\s+{_RUN})?"
    rf"|{_ORG_WORD}\s+(?:of|for)(?:\s+(?:the|and))?\s+{_RUN}){_AFTER}"
)
_ACRONYM = re.compile(rf"{_BEFORE}[A-Z][A-Z0-9&]*[A-Z][A-Z0-9]*{_AFTER}")
_ORG_WORD_END = re.compile(rf"(?:^|\s){_ORG_WORD}$")


Span = tuple[int, int]


class Collectives:
    """The iwi, hapū, marae, kura and organisations a text names: (start, end) spans per kept rule."""

    def __init__(self, iwi: PlaceGazetteer | None = None, organisations: PlaceGazetteer | None = None):
        self.iwi = iwi if iwi is not None else PlaceGazetteer(())
        self.organisations = organisations if organisations is not None else PlaceGazetteer(())

    @classmethod
    def from_lines(cls, iwi: Iterable[str], organisations: Iterable[str]) -> Collectives:
        """From the lists' lines (the gazetteer's format: one name a line, ``#`` comments, `` *`` for a name that
        is also a person's, kept only after a place word: "Maniapoto said" is a person, "of Maniapoto" the iwi)."""
        return cls(PlaceGazetteer.from_lines(iwi), PlaceGazetteer.from_lines(organisations))

    def __len__(self) -> int:
        return len(self.iwi) + len(self.organisations)

    def spans(self, text: str) -> dict[str, list[Span]]:
        """Where ``text`` names an iwi or hapū, a marae or kura, an organisation: the spans of each rule."""
        iwi = self.iwi.spans(text) + [_before_a_person(m) for m in _IWI.finditer(text)]
        kura = [m.span() for m in _KURA.finditer(text)]
        marae = [m.span() for m in _MARAE.finditer(text)]
        organisations = self.organisations.spans(text) + [m.span() for m in _ORGANISATION.finditer(text)]
        organisations += [m.span() for m in _ACRONYM.finditer(text)]
        return {KEPT_IWI: _outermost(iwi), KEPT_MARAE_KURA: _outermost(kura + marae),
                KEPT_ORGANISATION: _outermost(organisations)}

    def an_organisation(self, name: str) -> bool:
        """Whether ``name`` (a named-entity model's ORG or GPE) is an organisation or iwi by these rules: it ends
        in an organisation word, it is on a list, it is an acronym, or the iwi and kura patterns take all of it."""
        name = name.strip()
        if not name:
            return False
        if _ORG_WORD_END.search(name) or _ACRONYM.fullmatch(name):
            return True
        if self.iwi.knows(name) or self.organisations.knows(name):
            return True
        whole = (0, len(name))
        return any(whole in spans for spans in self.spans(name).values())


def _outermost(spans: Iterable[Span]) -> list[Span]:
    """The spans in order, without those inside another ("Ngāi Tahu" in "Te Rūnanga o Ngāi Tahu")."""
    unique = sorted(set(spans), key=lambda span: (span[0], -span[1]))
    return [span for span in unique if not any(s <= span[0] and span[1] <= e and (s, e) != span for s, e in unique)]


def _before_a_person(match: re.Match[str]) -> Span:
    """An iwi pattern's span, ending before a given name of the name list that comes after its first word:
    "Ngāti Porou Hemi Walker said" keeps "Ngāti Porou" only, while "Ngāti Rangi" and "Ngāti Hine" stay whole."""
    start = match.start("run")
    last_end = None
    for i, word in enumerate(_RUN_WORD.finditer(match["run"])):
        if i > 0 and word.group() in GIVEN_NAMES and last_end is not None:
            return match.start(), start + last_end
        if word.group()[:1].isupper():
            last_end = word.end()
    return match.span()
