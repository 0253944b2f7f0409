"""Mapping a generated reply to one of the displayed options (PROTOCOLS §2, generate mode).

Accepted, in this order, on the whole reply and then on its first non-empty line:

1. a lone option letter, optionally bracketed or followed by ``.``/``:``
   (``B``, ``(b)``, ``B.``);
2. an option's exact text, with or without its letter in front
   (``할머니``, ``A: 할머니``, ``C. 不知道``) — a letter followed by another
   option's text is contradictory and not accepted;
3. an "answer is …" expression whose object is (1) or (2), in English,
   Korean or Chinese (``정답은 A입니다``, ``答案是：B``, ``The answer is C``);
   if the reply holds several that disagree, none is accepted.

Anything else is out-of-choice (None). Letters are matched case-insensitively,
option texts after Unicode case folding and whitespace normalisation.
"""

from __future__ import annotations

import math

import re
import unicodedata
from typing import Sequence

_OPEN = "([（【「『\"'“‘"
_CLOSE = ")]）】」』\"'”’"
_TRAILING = ".。!！?？,，;；:：、．~…"
# Korean copulas / Chinese particles that may follow the answer ("A입니다", "A吧").
_TRAILING_WORDS = ("입니다", "이에요", "예요", "이다", "임", "요", "吧", "呢", "。")

_LONE_LETTER = re.compile(r"[\(\[（【]?\s*([A-Za-z])\s*[\)\]）】]?[.:：、．)]?")
_LETTER_THEN_TEXT = re.compile(r"[\(\[（【]?\s*([A-Za-z])\s*(?:[\)\]）】][.:：、．]?|[.:：、．])\s*(.+)", re.S)

_ANSWER_MARKERS = re.compile(
    r"(?:\bthe\s+(?:correct\s+)?answer\s+(?:is|would\s+be)\b|\banswer\s*[:：]"
    r"|정답은|정답\s*[:：]|답은|답\s*[:：]|답변은|답변\s*[:：]"
    r"|正确答案是|正确答案为|答案是|答案为|答案\s*[:：]|应选|应该选|我选择|我选|选择)"
    r"\s*[:：]?\s*",
    re.I,
)
_SEGMENT_END = re.compile(r"[\n。，,;；]|\.(?:\s|$)|\s(?:because|since|as)\b|因为|왜냐하면")


def normalise(text: str) -> str:
    """Case-folded, NFKC, whitespace collapsed: how option texts are compared."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _clean(text: str) -> str:
    s = text.strip()
    s = re.sub(r"[*_`]+", "", s).strip()  # markdown emphasis and code marks
    changed = True
    while changed and s:
        changed = False
        for word in _TRAILING_WORDS:
            if s.endswith(word) and len(s) > len(word):
                s, changed = s[: -len(word)].rstrip(), True
        if s and s[-1] in _TRAILING:
            s, changed = s[:-1].rstrip(), True
        if len(s) >= 2 and s[0] in _OPEN and s[-1] in _CLOSE and _OPEN.index(s[0]) == _CLOSE.index(s[-1]):
            s, changed = s[1:-1].strip(), True
    return s


def _letter_position(letter: str, letters: Sequence[str]) -> int | None:
    upper = [l.upper() for l in letters]
    return upper.index(letter.upper()) if letter.upper() in upper else None


def _forms(text: str) -> set[str]:
    return {form for form in (normalise(text), normalise(_clean(text))) if form}


def _text_position(text: str, options: Sequence[str]) -> int | None:
    wanted = _forms(text)
    matches = [i for i, option in enumerate(options) if wanted & _forms(option)]
    return matches[0] if len(matches) == 1 else None


def _match(candidate: str, letters: Sequence[str], options: Sequence[str]) -> int | None:
    s = _clean(candidate)
    if not s:
        return None
    by_text = _text_position(s, options)
    if by_text is not None:
        return by_text
    lone = _LONE_LETTER.fullmatch(s)
    if lone:
        return _letter_position(lone.group(1), letters)
    with_text = _LETTER_THEN_TEXT.fullmatch(s)
    if with_text:
        position = _letter_position(with_text.group(1), letters)
        if position is not None and _text_position(with_text.group(2), options) == position:
            return position
    return None


def _answer_expressions(text: str, letters: Sequence[str], options: Sequence[str]) -> list[int]:
    found = []
    for marker in _ANSWER_MARKERS.finditer(text):
        rest = text[marker.end() :]
        line = rest.split("\n", 1)[0]
        position = _match(line, letters, options)
        if position is None:
            end = _SEGMENT_END.search(rest)
            segment = rest[: end.start()] if end else rest
            position = _match(segment, letters, options)
            if position is None and segment.strip():
                # "答案是A，因为…": the first whitespace-separated token
                position = _match(segment.split()[0], letters, options)
        if position is not None:
            found.append(position)
    return found


def parse_choice(text: str, letters: Sequence[str], options: Sequence[str]) -> int | None:
    """The displayed position (0-based) the reply chooses, or None for out-of-choice.

    ``letters`` and ``options`` are in displayed order (after any permutation).
    """
    if len(letters) != len(options):
        raise ValueError("one letter per displayed option")
    stripped = text.strip()
    if not stripped:
        return None
    candidates = [stripped]
    first_line = next((line for line in stripped.splitlines() if line.strip()), "")
    if first_line.strip() != stripped:
        candidates.append(first_line)
    for candidate in candidates:
        position = _match(candidate, letters, options)
        if position is not None:
            return position
    expressed = set(_answer_expressions(stripped, letters, options))
    return expressed.pop() if len(expressed) == 1 else None


def ratio(numerator: float, denominator: float) -> float:
    """A share, NaN where nothing was counted (a metric undefined for the run)."""
    return numerator / denominator if denominator else math.nan
