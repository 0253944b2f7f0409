"""The one way data and replay files become text: UTF-8, or any Unicode encoding its byte order mark names.

UTF-8 with or without a byte order mark is read as it is. A UTF-16 or UTF-32
file (little or big endian) that starts with its byte order mark is decoded
too: the mark says unambiguously what the bytes are (it is how spreadsheet
programs save "Unicode text"). Anything else that is not valid UTF-8 (Big5,
GBK, Latin-1, a corrupted byte, UTF-16 without its mark) is a ``DataError``
naming the file, the line and the byte offset of the first undecodable byte;
culturebias never guesses a legacy encoding.
"""

from __future__ import annotations

import codecs
from pathlib import Path

from culturebias.domain.errors import DataError

# UTF-32 first: its little-endian mark begins with UTF-16's.
BYTE_ORDER_MARKS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
SAVE_AS_UTF8 = "save the file as UTF-8 (Big5, GBK and other legacy encodings are not read)"


def decode_text(data: bytes, file: str) -> str:
    """The text of a file's bytes, its byte order mark removed; a ``DataError`` where they are not Unicode."""
    mark, encoding = next(((m, e) for m, e in BYTE_ORDER_MARKS if data.startswith(m)), (b"", "utf-8"))
    body = data[len(mark) :]
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as error:
        offset = len(mark) + error.start
        line = body[: error.start].decode(encoding, errors="replace").count("\n") + 1
        bad = data[offset : offset + min(error.end - error.start, 4)].hex(" ")
        named = "UTF-8" if encoding == "utf-8" else f"{encoding.upper()} (as its byte order mark says)"
        hint = " (its NUL bytes suggest UTF-16 or UTF-32 without a byte order mark)" if b"\x00" in body else ""
        raise DataError(
            f"not {named} text: byte(s) {bad} at byte offset {offset} (line {line}) cannot be decoded{hint}; "
            + SAVE_AS_UTF8,
            file=file,
            row=line,
        ) from None
    nul = text.find("\x00")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        offset = len(mark) + len(text[:nul].encode(encoding))
        raise DataError(
            f"a NUL character at byte offset {offset} (line {line}): UTF-16 or UTF-32 text without a byte order mark, "
            f"or not a text file; {SAVE_AS_UTF8}",
            file=file,
            row=line,
        )
    return text


def read_text(path: Path, file: str | None = None) -> str:
    """The decoded text of ``path``; errors name it as ``file`` (default: the path)."""
    return decode_text(path.read_bytes(), str(path) if file is None else file)
