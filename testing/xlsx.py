"""Write a one-sheet .xlsx for tests with openpyxl (McBE's files are spreadsheets; reading lives in adapters/datasets).

openpyxl writes what spreadsheet programs write (shared strings, styles, document
properties); its zip entries carry the time of writing, so two calls with the
same rows give different bytes: compare parsed rows, never the bytes.
"""

from __future__ import annotations

import io
from collections.abc import Sequence


def write_xlsx(rows: Sequence[Sequence[object]], sheet_name: str = "Sheet1") -> bytes:
    """A one-sheet workbook; ``None`` and ``""`` leave a cell empty, ints and floats are numbers."""
    from openpyxl import Workbook

    workbook = Workbook()
    sheet = workbook.active
    sheet.title = sheet_name
    for row in rows:
        sheet.append([None if value == "" else value for value in row])
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()
