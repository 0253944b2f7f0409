"""Python-literal cells (``['a', 'b']``, ``[('男生', '3C'), ('T1', None)]``) read without ``ast``.

KoBBQ's ``choices`` and TWBias's ``T-A Combination`` columns hold Python
literals. ``ast.literal_eval`` reads them, but CPython 3.11 can raise
``SystemError: AST constructor recursion depth mismatch`` when two threads
parse at once, so concurrent ``evaluate()`` calls failed while loading. This
parser takes the shapes the data uses: lists and tuples (nested), strings in
single or double quotes with Python's escapes (an ``r``/``u`` prefix too),
decimal numbers, ``None``, ``True`` and ``False``. It gives what ``ast.literal_eval`` gives for
them (a test compares every row of the data), keeps no state, and raises
``LiteralSyntaxError`` naming the position for anything else.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Union

LiteralValue = Union[str, None, bool, int, float, list["LiteralValue"], tuple["LiteralValue", ...]]
MAX_DEPTH = 32  # the data nests two deep; a deeper cell is refused, never a RecursionError
_NAMES = {"None": None, "True": True, "False": False}
_SIMPLE_ESCAPES = {
    "\n": "", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_CLOSING = {"[": "]", "(": ")"}
# a decimal int (no leading zeros, as Python) or float, with a sign
_NUMBER = re.compile(r"[-+]?(?:(?:\d+\.\d*|\.\d+|\d+)[eE][-+]?\d+|\d+\.\d*|\.\d+|0+|[1-9]\d*)(?![\w.])")


class LiteralSyntaxError(ValueError):
    def __init__(self, message: str, position: int):
        self.position = position
        super().__init__(f"{message} at character {position + 1}")


def parse_literal(text: str) -> LiteralValue:
    """The value of ``text``, a Python literal of the shapes above (surrounding blanks ignored)."""
    parser = _Parser(text)
    value = parser.value(0)
    parser.blanks()
    if parser.at < len(text):
        raise LiteralSyntaxError(f"unexpected {text[parser.at]!r} after the value", parser.at)
    return value


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.at = 0

    def blanks(self) -> None:
        while self.at < len(self.text) and self.text[self.at] in " \t\r\n":
            self.at += 1

    def value(self, depth: int) -> LiteralValue:
        self.blanks()
        if self.at >= len(self.text):
            raise LiteralSyntaxError("a value is missing", self.at)
        char = self.text[self.at]
        if char in _CLOSING:
            if depth >= MAX_DEPTH:
                raise LiteralSyntaxError(f"nested more than {MAX_DEPTH} deep", self.at)
            return self._sequence(char, depth + 1)
        if char in "'\"" or (char in "rRuU" and self.text[self.at + 1 : self.at + 2] in ("'", '"')):
            return self._strings()
        for name, value in _NAMES.items():
            end = self.at + len(name)
            if self.text.startswith(name, self.at) and not self.text[end : end + 1].isidentifier():
                self.at = end
                return value
        number = _NUMBER.match(self.text, self.at)
        if number:
            self.at = number.end()
            digits = number.group()
            return float(digits) if any(c in digits for c in ".eE") else int(digits)
        raise LiteralSyntaxError(f"{char!r} starts no list, tuple, string, number, None, True or False", self.at)

    def _sequence(self, opening: str, depth: int) -> LiteralValue:
        start = self.at
        self.at += 1
        items: list[LiteralValue] = []
        trailing_comma = False
        while True:
            self.blanks()
            if self.at >= len(self.text):
                raise LiteralSyntaxError(f"{opening!r} is never closed", start)
            if self.text[self.at] == _CLOSING[opening]:
                self.at += 1
                break
            items.append(self.value(depth))
            self.blanks()
            if self.at < len(self.text) and self.text[self.at] == ",":
                self.at += 1
                trailing_comma = True
                continue
            trailing_comma = False
            self.blanks()
            if self.at >= len(self.text) or self.text[self.at] != _CLOSING[opening]:
                raise LiteralSyntaxError(f"expected ',' or {_CLOSING[opening]!r}", self.at)
        if opening == "[":
            return items
        if len(items) == 1 and not trailing_comma:
            return items[0]  # (x) is x in parentheses, (x,) a tuple
        return tuple(items)

    def _strings(self) -> str:
        """One string, or adjacent ones joined as Python joins them (``'a' 'b'``)."""
        parts = [self._string()]
        while True:
            mark = self.at
            self.blanks()
            if self.at < len(self.text) and (
                self.text[self.at] in "'\"" or (self.text[self.at] in "rRuU" and self.text[self.at + 1 : self.at + 2] in ("'", '"'))
            ):
                parts.append(self._string())
            else:
                self.at = mark
                return "".join(parts)

    def _string(self) -> str:
        raw = False
        if self.text[self.at] in "rRuU":
            raw = self.text[self.at] in "rR"
            self.at += 1
        quote = self.text[self.at]
        start = self.at
        if self.text.startswith(quote * 3, self.at):
            raise LiteralSyntaxError("triple-quoted strings are not read", start)
        self.at += 1
        out: list[str] = []
        while True:
            if self.at >= len(self.text):
                raise LiteralSyntaxError("a string is never closed", start)
            char = self.text[self.at]
            if char == quote:
                self.at += 1
                return "".join(out)
            if char == "\n":
                raise LiteralSyntaxError("a line break inside a string", self.at)
            if char == "\\":
                if raw:
                    following = self.text[self.at + 1 : self.at + 2]
                    if not following:
                        raise LiteralSyntaxError("a string is never closed", start)
                    out.append(char + following)  # a raw string keeps the backslash, and the quote it protects
                    self.at += 2
                    continue
                out.append(self._escape())
                continue
            out.append(char)
            self.at += 1

    def _escape(self) -> str:
        at = self.at
        code = self.text[at + 1 : at + 2]
        if not code:
            raise LiteralSyntaxError("a string is never closed", at)
        if code in _SIMPLE_ESCAPES:
            self.at += 2
            return _SIMPLE_ESCAPES[code]
        if code in "01234567":
            digits = code
            while len(digits) < 3 and self.text[at + 1 + len(digits) : at + 2 + len(digits)] in tuple("01234567"):
                digits += self.text[at + 1 + len(digits)]
            self.at += 1 + len(digits)
            return chr(int(digits, 8))
        if code in _HEX_ESCAPES:
            width = _HEX_ESCAPES[code]
            digits = self.text[at + 2 : at + 2 + width]
            if len(digits) != width or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise LiteralSyntaxError(f"\\{code} needs {width} hex digits", at)
            value = int(digits, 16)
            if value > 0x10FFFF:
                raise LiteralSyntaxError(f"\\{code}{digits} is past the last Unicode character", at)
            self.at += 2 + width
            return chr(value)
        if code == "N" and self.text[at + 2 : at + 3] == "{":
            end = self.text.find("}", at + 3)
            if end == -1:
                raise LiteralSyntaxError("\\N{ is never closed", at)
            try:
                char = unicodedata.lookup(self.text[at + 3 : end])
            except KeyError:
                raise LiteralSyntaxError(f"no Unicode character is named {self.text[at + 3 : end]!r}", at) from None
            self.at = end + 1
            return char
        self.at += 2  # an unknown escape keeps its backslash, as Python does
        return "\\" + code
