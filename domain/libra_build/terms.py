"""Candidate terms of a corpus: the words and short n-grams a keyword can be (PROTOCOLS §4 construction step 2).

Terms are matched case-insensitively but with diacritics kept ("Māori" and
"Maori" are different spellings; a macron is never dropped). A term is shown in
its most frequent surface form. Stop words never start or end a term, so
"the iwi" is not a term while "kapa haka" is.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

from culturebias.domain.libra.words import words

STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against all almost also although always am among an and another any anyone
    anything are around as at away back be became because become been before being below between both but by
    can cannot could did do does doing done down during each either else enough even ever every few for from
    further get gets getting go goes going gone got had has have having he her here hers herself him himself
    his how however i if in into is it its itself just last least less let like made make many may me might
    more most much must my myself near never new next no nor not now of off often on once one only onto or
    other others our ours ourselves out over own per perhaps put quite rather really said same say says see
    seem seemed seems several shall she should since so some someone something sometimes still such than that
    the their theirs them themselves then there these they this those though through thus to together too
    toward towards under until up upon us very via was we well were what whatever when where whether which
    while who whom whose why will with within without would yet you your yours yourself yourselves s t ll re
    ve d m don doesn didn isn wasn aren weren won wouldn couldn shouldn
    """.split()
)


def term_key(text: str) -> str:
    """How terms are compared: case-folded, diacritics kept."""
    return text.casefold()


def tokens(text: str) -> list[str]:
    """The words of ``text`` as written (letters of any script, inner apostrophes and hyphens), a possessive
    ending dropped ("the iwi's land" holds the term "iwi")."""
    return [_without_possessive(w) for w in words(text)]


def _without_possessive(word: str) -> str:
    for ending in ("'s", "’s", "'S", "’S"):
        if word.endswith(ending) and len(word) > len(ending):
            return word[: -len(ending)]
    return word


def _is_content(word_key: str) -> bool:
    return len(word_key) >= 2 and word_key not in STOP_WORDS


def sentence_terms(text: str, max_ngram: int) -> list[tuple[str, str]]:
    """(key, surface) of every candidate term occurrence in ``text``, in order of appearance."""
    surface = tokens(text)
    keys = [term_key(w) for w in surface]
    found: list[tuple[str, str]] = []
    for size in range(1, max_ngram + 1):
        for start in range(len(keys) - size + 1):
            window = keys[start : start + size]
            if _is_content(window[0]) and _is_content(window[-1]):
                found.append((" ".join(window), " ".join(surface[start : start + size])))
    return found


def contains_phrase(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """Whether the word sequence ``needle`` occurs contiguously in ``haystack``."""
    size = len(needle)
    return size > 0 and any(list(haystack[i : i + size]) == list(needle) for i in range(len(haystack) - size + 1))


@dataclass(frozen=True)
class CorpusTerms:
    """Every candidate term of a corpus: in how many sentences it occurs, how it is written, where."""

    keys: tuple[str, ...]  # most frequent first, then alphabetical
    sentence_counts: tuple[int, ...]  # sentences holding the term, aligned with ``keys``
    surfaces: tuple[str, ...]  # most frequent surface form, aligned with ``keys``
    per_sentence: tuple[frozenset[str], ...]  # the (kept) term keys of each sentence

    def surface(self, key: str) -> str:
        return self.surfaces[self.keys.index(key)]


def corpus_terms(sentences: Sequence[str], *, max_ngram: int, min_count: int, max_terms: int | None) -> CorpusTerms:
    """Terms found in at least ``min_count`` sentences, at most ``max_terms`` of the most frequent."""
    document_frequency: Counter[str] = Counter()
    surface_counts: dict[str, Counter[str]] = {}
    raw: list[set[str]] = []
    for sentence in sentences:
        keys = set()
        for key, surface in sentence_terms(sentence, max_ngram):
            keys.add(key)
            surface_counts.setdefault(key, Counter())[surface] += 1
        document_frequency.update(keys)
        raw.append(keys)
    kept = sorted((k for k, c in document_frequency.items() if c >= min_count), key=lambda k: (-document_frequency[k], k))
    if max_terms is not None:
        kept = kept[:max_terms]
    kept_set = set(kept)
    surfaces = tuple(min(surface_counts[k].items(), key=lambda item: (-item[1], item[0]))[0] for k in kept)
    return CorpusTerms(
        keys=tuple(kept),
        sentence_counts=tuple(document_frequency[k] for k in kept),
        surfaces=surfaces,
        per_sentence=tuple(frozenset(keys & kept_set) for keys in raw),
    )


def seeds_in(text_tokens: Sequence[str], seed_keys: Iterable[str]) -> set[str]:
    """The seed keys (case-folded, space-separated words) whose words occur contiguously in ``text_tokens``."""
    present = set(text_tokens)
    found = set()
    for seed in seed_keys:
        words = seed.split(" ")
        if all(w in present for w in words) and (len(words) == 1 or contains_phrase(text_tokens, words)):
            found.add(seed)
    return found


def seed_key(keyword: str) -> str:
    """A seed keyword as a term key: its words, case-folded, single-spaced."""
    return " ".join(term_key(w) for w in tokens(keyword))


def look_alike(term: str, seeds: Iterable[str], *, prefix: int = 4) -> bool:
    """Whether a word of ``term`` only looks like a seed word: the same first ``prefix`` letters, then different,
    neither a prefix of the other ("Tongariro" for "Tongan"); subword embeddings find such words similar."""
    seed_words = {term_key(w) for seed in seeds for w in tokens(seed)}
    for word in (term_key(w) for w in tokens(term)):
        for seed in seed_words:
            if word[:prefix] == seed[:prefix] and len(word) >= prefix and not (word.startswith(seed) or seed.startswith(word)):
                return True
    return False
