"""Read the first worksheet of an .xlsx file (McBE publishes one spreadsheet per category) with openpyxl.

Every cell comes back as text (numbers in Python's decimal form, booleans as
TRUE/FALSE) or None when empty, with the sheet's 1-based row numbers, so a data
error can name the row a spreadsheet program shows. Formula cells give the value
the spreadsheet last computed (``data_only``).
"""

from __future__ import annotations

import datetime as _dt
import io
import zipfile
from xml.etree.ElementTree import ParseError

Row = tuple[int, list[str | None]]  # (1-based sheet row number, cell texts by column)


class XlsxError(ValueError):
    """The bytes are not a readable .xlsx workbook."""


def _text(value: object) -> str | None:
    from openpyxl.utils.escape import unescape

    if value is None:
        return None
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, str):
        # OOXML writes control characters as ``_xHHHH_`` (``_x000D_`` for a carriage return); openpyxl keeps them.
        return unescape(value)
    return str(value)


def read_first_sheet(data: bytes) -> list[Row]:
    """Rows of the first worksheet, in sheet order, with their 1-based row numbers."""
    from openpyxl import load_workbook
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except zipfile.BadZipFile as error:
        raise XlsxError(f"not an .xlsx (zip) file: {error}") from None
    except (InvalidFileException, KeyError, ParseError, TypeError, ValueError, IndexError) as error:
        raise XlsxError(f"malformed workbook: {error}") from None
    try:
        sheets = workbook.worksheets
        if not sheets:
            raise XlsxError("the workbook has no worksheet")
        # Some writers record a wrong <dimension>; read-only mode would cut the sheet to it.
        sheets[0].reset_dimensions()
        rows = sheets[0].iter_rows(min_row=1, values_only=True)
        return [(number, [_text(value) for value in values]) for number, values in enumerate(rows, start=1)]
    except XlsxError:
        raise
    except (KeyError, ParseError, TypeError, ValueError, IndexError) as error:
        raise XlsxError(f"malformed workbook: {error}") from None
    finally:
        workbook.close()
