"""Read the first worksheet of an .xlsx file with the standard library.

McBE publishes one spreadsheet per category. An .xlsx file is a zip of XML parts;
reading the cells of one sheet needs the workbook (which sheet is first), its
relationships (where that sheet's part is), the shared-string table and the sheet
itself: a small, stable subset of OOXML. Doing it here keeps culturebias free of a
spreadsheet dependency (openpyxl) for six text columns. Every cell comes back as
text (numbers in their stored decimal form) or None when empty.
(``culturebias.testing.xlsx`` writes the same subset for tests.)
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from collections.abc import Sequence
from xml.etree import ElementTree as ET
from xml.sax.saxutils import escape

_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_STRICT_REL_NS = "http://purl.oclc.org/ooxml/officeDocument/relationships"
_ESCAPED_CHAR = re.compile(r"_x([0-9A-Fa-f]{4})_")
_CELL_REF = re.compile(r"^([A-Za-z]+)(\d+)$")

Row = tuple[int, list[str | None]]  # (1-based sheet row number, cell texts by column)


class XlsxError(ValueError):
    """The bytes are not a readable .xlsx workbook."""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _children(element: ET.Element, name: str) -> list[ET.Element]:
    return [child for child in element if _local(child.tag) == name]


def _unescape(text: str) -> str:
    """OOXML writes control characters as ``_xHHHH_`` (e.g. ``_x000D_`` for a carriage return)."""
    return _ESCAPED_CHAR.sub(lambda m: chr(int(m.group(1), 16)), text)


def _string_item_text(item: ET.Element) -> str:
    """Text of a shared-string item or inline string: plain or rich-text runs, phonetic runs left out."""
    parts: list[str] = []

    def walk(element: ET.Element) -> None:
        for child in element:
            name = _local(child.tag)
            if name == "rPh":
                continue
            if name == "t":
                parts.append(child.text or "")
            else:
                walk(child)

    walk(item)
    return _unescape("".join(parts))


def column_index(letters: str) -> int:
    """``A`` → 0, ``Z`` → 25, ``AA`` → 26."""
    index = 0
    for char in letters.upper():
        index = index * 26 + (ord(char) - ord("A") + 1)
    return index - 1


def column_letters(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def _first_sheet_part(archive: zipfile.ZipFile) -> str:
    workbook = ET.fromstring(archive.read("xl/workbook.xml"))
    sheets = [el for el in workbook.iter() if _local(el.tag) == "sheet"]
    if not sheets:
        raise XlsxError("the workbook has no worksheet")
    sheet = sheets[0]
    rel_id = sheet.get(f"{{{_REL_NS}}}id") or sheet.get(f"{{{_STRICT_REL_NS}}}id")
    try:
        rels = ET.fromstring(archive.read("xl/_rels/workbook.xml.rels"))
    except KeyError:
        rels = None
    if rels is not None and rel_id:
        for rel in rels:
            if rel.get("Id") == rel_id:
                target = rel.get("Target", "")
                if target.startswith("/"):
                    return target.lstrip("/")
                return posixpath.normpath(posixpath.join("xl", target))
    if "xl/worksheets/sheet1.xml" in archive.namelist():
        return "xl/worksheets/sheet1.xml"
    raise XlsxError("cannot locate the first worksheet")


def _shared_strings(archive: zipfile.ZipFile) -> list[str]:
    try:
        root = ET.fromstring(archive.read("xl/sharedStrings.xml"))
    except KeyError:
        return []
    return [_string_item_text(item) for item in _children(root, "si")]


def _cell_text(cell: ET.Element, shared: list[str]) -> str | None:
    kind = cell.get("t", "n")
    if kind == "inlineStr":
        inline = _children(cell, "is")
        return _string_item_text(inline[0]) if inline else None
    values = _children(cell, "v")
    if not values or values[0].text is None:
        return None
    raw = values[0].text
    if kind == "s":
        try:
            return shared[int(raw)]
        except (ValueError, IndexError):
            raise XlsxError(f"cell {cell.get('r')} points at a missing shared string {raw!r}") from None
    if kind == "b":
        return "TRUE" if raw.strip() == "1" else "FALSE"
    return _unescape(raw) if kind == "str" else raw


def read_first_sheet(data: bytes) -> list[Row]:
    """Rows of the first worksheet, in sheet order, with their 1-based row numbers."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as error:
        raise XlsxError(f"not an .xlsx (zip) file: {error}") from None
    with archive:
        try:
            shared = _shared_strings(archive)
            root = ET.fromstring(archive.read(_first_sheet_part(archive)))
        except (KeyError, ET.ParseError) as error:
            raise XlsxError(f"malformed workbook: {error}") from None
        rows: list[Row] = []
        previous = 0
        for row in (el for el in root.iter() if _local(el.tag) == "row"):
            number = int(row.get("r") or previous + 1)
            previous = number
            cells: dict[int, str | None] = {}
            next_column = 0
            for cell in _children(row, "c"):
                ref = cell.get("r")
                match = _CELL_REF.match(ref) if ref else None
                column = column_index(match.group(1)) if match else next_column
                next_column = column + 1
                cells[column] = _cell_text(cell, shared)
            width = max(cells) + 1 if cells else 0
            rows.append((number, [cells.get(i) for i in range(width)]))
        return rows


# --- writing ---------------------------------------------------------------------------
