"""The pure parts of the LIBRA build's own steps (PROTOCOLS §4 construction 1, 4, 5): clean, search, perturb."""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from culturebias.domain.libra_build.collectives import KEPT_IWI, KEPT_MARAE_KURA, KEPT_ORGANISATION, Collectives
from culturebias.domain.libra_build.keywords import ExpandedKeyword, SeedGroup
from culturebias.domain.libra_build.names import GIVEN_NAMES, NAME_TITLES
from culturebias.domain.libra_build.places import PlaceGazetteer

NAME_PLACEHOLDER = "[NAME]"


class Sentence(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str  # "<document>:<n>"
    document: str
    text: str


class CleanResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    sentences: tuple[Sentence, ...]
    documents_read: int
    documents_dropped: tuple[tuple[str, str], ...]  # (document, reason)
    names_replaced: int
    # rule → names it replaced (REPLACED_BY), or name-like spans kept as places (KEPT_BY); {} in older step files
    names_by_rule: dict[str, int] = {}


class Hit(BaseModel):
    model_config = ConfigDict(frozen=True)

    sentence_id: str
    text: str
    keyword: str
    group: str
    category: str
    start: int  # ω = text[start:start + len(keyword)] (as written in the sentence)
    span: str


class Candidate(BaseModel):
    """A triplet proposed for review: S = left + target + right, S_p and S_u swap only ω."""

    model_config = ConfigDict(frozen=True)

    id: str
    group: str
    category: str
    left: str
    target: str
    right: str
    anti_stereotype: str
    unrelated: str
    keyword_source: str = "seed"

    @property
    def sentence(self) -> str:
        return self.left + self.target + self.right


class PerturbResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    candidates: tuple[Candidate, ...]
    not_perturbable: tuple[tuple[str, str], ...]  # (sentence id, why)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“‘(]?[A-ZĀĒĪŌŪ0-9])")
_WORD = re.compile(r"[A-Za-zĀĒĪŌŪāēīōū][\w'’-]*")
_IRRELEVANT_RULES: Mapping[str, tuple[str, ...]] = {
    "weather": ("forecast", "rain", "showers", "wind", "temperatures", "metservice", "frost", "sunny"),
    "joke": ("joke", "punchline", "knock knock", "why did the"),
    "puzzle": ("puzzle", "crossword", "sudoku", "riddle", "anagram"),
}


def split_sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_END.split(" ".join(text.split())) if part.strip()]


def irrelevant_reason(text: str) -> str | None:
    """Why a document is bias-irrelevant by the rules (2+ cue words of one kind), or None."""
    lowered = text.lower()
    for reason, cues in _IRRELEVANT_RULES.items():
        if sum(lowered.count(cue) for cue in cues) >= 2:
            return reason
    return None


# Capitalised words next to a reporting phrase are a name whether or not the gazetteer knows it:
# "said Kōwhai Smith", "according to Jo Bloggs", "Jo Bloggs said".
_CAP = r"[A-ZĀĒĪŌŪ][\w'’-]*"
_REPORTED = re.compile(
    rf"(?:(?<=\bsaid )|(?<=\baccording to )|(?<=\bAccording to )|(?<=\btold by ))(?P<a>{_CAP}(?: {_CAP})?)"
    rf"|(?P<b>{_CAP} {_CAP})(?= (?:said|says|told|explained)\b)"
)


_POSSESSIVE = re.compile(r"['’]s$")
_NOT_NAMES = frozenset("The A An It They He She We I You This That These Those There Police Government".split())


# The rules build_report.json counts replacements by (PROTOCOLS §4 step 1); "kept_*" count a span one of
# them proposed that names a place, an iwi or hapū, a marae or kura, or an organisation: kept.
REPLACED_BY = ("ner_person", "after_role", "leading_subject", "given_name", "title", "pattern")
KEPT_BY = ("kept_gazetteer", KEPT_IWI, KEPT_MARAE_KURA, KEPT_ORGANISATION, "kept_ner_place")
Span = tuple[int, int]


def anonymise(text: str, protected: frozenset[str] = frozenset(), places: PlaceGazetteer | None = None,
              collectives: Collectives | None = None) -> tuple[str, int]:
    """People's names become [NAME] (``anonymise_by_rule``); the text and how many were replaced."""
    out, counts = anonymise_by_rule(text, protected, places, collectives=collectives)
    return out, sum(counts[rule] for rule in REPLACED_BY)


def anonymise_by_rule(
    text: str,
    protected: frozenset[str] = frozenset(),
    places: PlaceGazetteer | None = None,
    keep: Mapping[str, Sequence[Span]] | None = None,
    collectives: Collectives | None = None,
) -> tuple[str, Counter[str]]:
    """People's names become [NAME]: gazetteer given names with any capitalised surname after them,
    and capitalised words after a title (Mr, Dr, ...) or a reporting verb pattern. Words in ``protected``
    (the seed keywords, e.g. "Māori") are never taken for names; nor is a span that lies inside a place:
    one ``places`` finds in the text (counted ``kept_gazetteer``) or one of ``keep``'s (its key counts it,
    e.g. ``kept_ner_place``), nor one inside an iwi, marae, kura or organisation that ``collectives`` finds
    (``kept_iwi``, ``kept_marae_kura``, ``kept_organisation``). Returns the text and the count per rule
    (REPLACED_BY, KEPT_BY)."""
    kept_spans: dict[str, Sequence[Span]] = {"kept_gazetteer": places.spans(text) if places is not None else []}
    if collectives is not None:
        kept_spans.update(collectives.spans(text))
    kept_spans.update(keep or {})
    counts: Counter[str] = Counter()
    kept_counted: set[tuple[str, Span]] = set()  # a kept span proposed by two rules (a name, "X said") counts once

    def a_place(span: Span) -> bool:
        for rule, spans in kept_spans.items():
            keeping = next((k for k in spans if k[0] <= span[0] and span[1] <= k[1]), None)
            if keeping is not None:
                if (rule, keeping) not in kept_counted:
                    kept_counted.add((rule, keeping))
                    counts[rule] += 1
                return True
        return False

    tokens = list(_WORD.finditer(text))
    spans: list[tuple[int, int, str]] = []
    i = 0
    while i < len(tokens):
        word = tokens[i].group()
        owner = _POSSESSIVE.sub("", word)  # "Tama's whānau": the name is Tama, and no surname follows
        if owner != word and owner in GIVEN_NAMES and owner not in protected:
            if not a_place((tokens[i].start(), tokens[i].start() + len(owner))):
                spans.append((tokens[i].start(), tokens[i].start() + len(owner), "given_name"))
            i += 1
            continue
        is_name = (word in GIVEN_NAMES and word not in protected) or (
            word.rstrip(".") in NAME_TITLES and i + 1 < len(tokens) and tokens[i + 1].group()[:1].isupper()
            and tokens[i + 1].group() not in protected and text[tokens[i].end():tokens[i + 1].start()] in (" ", ". ")
        )
        if not is_name:
            i += 1
            continue
        start = tokens[i].start()
        end = tokens[i].end()
        rule = "given_name"
        if word.rstrip(".") in NAME_TITLES:
            rule = "title"
            i += 1
            end = tokens[i].end()
        j = i + 1
        # A following capitalised word right after (one space) is the surname.
        while j < len(tokens) and tokens[j].group()[:1].isupper() and tokens[j].group() not in protected \
                and text[end:tokens[j].start()] == " ":
            end = tokens[j].end()
            j += 1
        if not a_place((start, end)):
            spans.append((start, end, rule))
        i = j
    for match in _REPORTED.finditer(text):
        group = "a" if match["a"] else "b"
        start, end = match.span(group)
        words = match[group].split()
        if words[0] in _NOT_NAMES or words[0].rstrip(".") in NAME_TITLES or any(word in protected for word in words) \
                or any(s < end and start < e for s, e, _ in spans) or a_place((start, end)):
            continue
        spans.append((start, end, "pattern"))
    spans.sort()
    out = text
    for start, end, rule in reversed(spans):
        out = out[:start] + NAME_PLACEHOLDER + out[end:]
        counts[rule] += 1
    return out, counts


def keyword_pattern(keyword: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w])" + re.escape(keyword) + r"(?![\w])", re.IGNORECASE)


def search(
    sentences: Sequence[Sentence],
    keywords: Sequence[ExpandedKeyword],
    categories: Mapping[str, str],
    groups_per_sentence: Sequence[frozenset[str]] | None = None,
) -> list[Hit]:
    """Every (sentence, keyword, group) hit, whole words only; longer keywords first so "Māori women" wins over
    "Māori" at the same position. A sentence without a hit yields nothing.

    ``groups_per_sentence`` (aligned with ``sentences``): the groups whose keywords are searched in each
    sentence, i.e. the group its topic cluster was mapped to (PROTOCOLS §4 step 4); None searches every
    sentence with every keyword (the option for corpora too small to cluster)."""
    ordered = sorted(keywords, key=lambda k: (-len(k.keyword), k.group, k.keyword))
    patterns = [(keyword, keyword_pattern(keyword.keyword)) for keyword in ordered]  # compiled once, not per sentence
    hits: list[Hit] = []
    for index, sentence in enumerate(sentences):
        allowed = None if groups_per_sentence is None else groups_per_sentence[index]
        if allowed is not None and not allowed:
            continue
        # An anonymised name is never a keyword's span.
        taken = [(m.start(), m.end()) for m in re.finditer(re.escape(NAME_PLACEHOLDER), sentence.text)]
        for keyword, pattern in patterns:
            if allowed is not None and keyword.group not in allowed:
                continue
            for match in pattern.finditer(sentence.text):
                if any(match.start() < end and start < match.end() for start, end in taken):
                    continue
                taken.append((match.start(), match.end()))
                hits.append(
                    Hit(
                        sentence_id=sentence.id,
                        text=sentence.text,
                        keyword=keyword.keyword,
                        group=keyword.group,
                        category=categories.get(keyword.group, "") or "unspecified",
                        start=match.start(),
                        span=match.group(),
                    )
                )
    return hits


UNRELATED_TERMS = (
    "teaspoon", "lamppost", "umbrella", "carburettor", "stapler", "jandal", "toaster",
    "wheelbarrow", "paperclip", "doorknob", "kettle", "bicycle pump",
)


def _match_case(term: str, like: str) -> str:
    if like[:1].isupper() and term[:1].islower():
        return term[:1].upper() + term[1:]
    return term


def _counterpart_term(group: SeedGroup | None, seeds: Sequence[SeedGroup], by_group: Mapping[str, SeedGroup]) -> str | None:
    """The first seed of the group's counterpart, else of the first other group of its category; a group with
    neither has none (never an unrelated group's term)."""
    if group is None:
        return None
    if group.counterpart is not None and group.counterpart in by_group:
        return by_group[group.counterpart].keywords[0]
    if group.category is None:
        return None
    others = [other for other in seeds if other.group != group.group and other.category == group.category]
    return others[0].keywords[0] if others else None


def perturb(
    hits: Sequence[Hit],
    seeds: Sequence[SeedGroup],
    antonyms: Mapping[str, str],
    *,
    seed: int = 0,
    unrelated_terms: Sequence[str] = UNRELATED_TERMS,
) -> PerturbResult:
    """S_p: the keyword's antonym (seeds file or table), else the first seed of the group's counterpart (or of
    another group of the same category); S_u: an unrelated term drawn with ``seed``. A hit with no anti-stereotyped term is counted."""
    by_group = {group.group: group for group in seeds}
    lowered_antonyms = {key.lower(): value for key, value in antonyms.items()}
    candidates: list[Candidate] = []
    skipped: list[tuple[str, str]] = []
    seen: set[str] = set()
    for hit in hits:
        rng = random.Random(f"{seed}:{hit.sentence_id}:{hit.start}")
        anti = lowered_antonyms.get(hit.keyword.lower())
        if anti is None:
            anti = _counterpart_term(by_group.get(hit.group), seeds, by_group)
        if anti is None:
            skipped.append((hit.sentence_id, f"no anti-stereotyped term for {hit.keyword!r} ({hit.group})"))
            continue
        unrelated = _match_case(rng.choice(list(unrelated_terms)), hit.span)
        anti = _match_case(anti, hit.span)
        if anti.lower() == hit.span.lower() or unrelated.lower() == hit.span.lower():
            skipped.append((hit.sentence_id, f"the replacement equals the keyword {hit.span!r}"))
            continue
        ident = f"{hit.sentence_id}:{hit.start}"
        if ident in seen:
            continue
        seen.add(ident)
        candidates.append(
            Candidate(
                id=ident,
                group=hit.group,
                category=hit.category,
                left=hit.text[: hit.start],
                target=hit.span,
                right=hit.text[hit.start + len(hit.span) :],
                anti_stereotype=anti,
                unrelated=unrelated,
            )
        )
    return PerturbResult(candidates=tuple(candidates), not_perturbable=tuple(skipped))
