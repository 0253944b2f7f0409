"""General lexicons of a language, for LIBRA's knowledge boundary (V_w).

Specs accepted by ``open_lexicon``:

- ``pyspellchecker`` or ``pyspellchecker:<lang>`` (default ``en``): the word
  frequency dictionary shipped in the ``pyspellchecker`` package (MIT; built
  from OpenSubtitles frequency lists, ~160k English words, inflected forms
  included). ``min_frequency`` drops words rarer than that share of the corpus,
  e.g. ``1e-7`` makes rare regional words such as "togs" or "chur" local.
- ``wordlist:<path>`` or a path to a text file: one word per line (``#``
  comments), e.g. ``/usr/share/dict/british-english``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from culturebias.domain.errors import ConfigError


class SpellcheckerLexicon:
    def __init__(self, language: str = "en", min_frequency: float = 0.0):
        try:
            from spellchecker import SpellChecker
        except ImportError as error:  # pragma: no cover - a declared dependency
            raise ConfigError("the pyspellchecker package is needed for protocol.lexicon=pyspellchecker") from error
        try:
            checker = SpellChecker(language=language, distance=1)
        except ValueError as error:
            raise ConfigError(f"pyspellchecker has no dictionary for language {language!r}: {error}") from None
        self._frequency = checker.word_frequency
        self._language = language
        self._min_frequency = float(min_frequency)

    def describe(self) -> str:
        from importlib.metadata import version

        threshold = f", min frequency {self._min_frequency:g}" if self._min_frequency > 0 else ""
        return f"pyspellchecker {version('pyspellchecker')} ({self._language}{threshold})"

    def known(self, forms: Iterable[str]) -> set[str]:
        counts = self._frequency.dictionary
        total = self._frequency.total_words or 1
        hits = set()
        for form in forms:
            count = counts.get(form.lower())
            if count and count / total >= self._min_frequency:
                hits.add(form)
        return hits


class WordListLexicon:
    def __init__(self, path: str | Path):
        self._path = Path(path).expanduser()
        if not self._path.is_file():
            raise ConfigError(f"protocol.lexicon: word list {self._path} does not exist")
        text = self._path.read_text(encoding="utf-8-sig", errors="replace")
        self._words = {
            line.strip().casefold() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
        }

    def describe(self) -> str:
        return f"word list {self._path} ({len(self._words)} words)"

    def known(self, forms: Iterable[str]) -> set[str]:
        return {form for form in forms if form.casefold() in self._words}


def open_lexicon(spec: str, min_frequency: float = 0.0):
    name, _, argument = spec.partition(":")
    if name == "pyspellchecker":
        return SpellcheckerLexicon(argument or "en", min_frequency)
    if name == "wordlist":
        return WordListLexicon(argument)
    if Path(spec).expanduser().is_file():
        return WordListLexicon(spec)
    raise ConfigError(
        f"protocol.lexicon={spec!r}: use pyspellchecker[:<lang>], wordlist:<path> or the path of a word list"
    )
