"""CSV and TSV files as a header and records, read through ``text_files`` with errors that name file and line.

Quoting is the ``csv`` module's default dialect (what pandas and spreadsheet
programs write). Records are numbered by the line they end on, as
``csv.reader.line_num`` counts, so a quoted field may span lines. What the
``csv`` module reports as an error (a field over its size limit, 131,072
characters by default) and what it would read silently but wrongly (a stray
quote that swallows the lines after it into one field) are ``DataError``s
naming the file and the line where the broken record starts.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from culturebias.adapters.datasets.text_files import decode_text
from culturebias.domain.errors import DataError

Record = tuple[int, list[str]]  # (the line the record ends on, its cells)


@dataclass(frozen=True)
class Table:
    file: str
    header: list[str]  # the first record's cells, as written
    records: list[Record]  # the records after it; physically empty lines are left out

    def dicts(self) -> list[tuple[int, dict[str, str]]]:
        """Records as ``csv.DictReader`` gives them: missing cells are "", cells beyond the header are dropped."""
        width = len(self.header)
        return [(line, dict(zip(self.header, cells + [""] * (width - len(cells))))) for line, cells in self.records]

    def require_rows(self, what: str) -> None:
        """A ``DataError`` unless the table has a record after its header."""
        if not self.records:
            raise DataError(f"no {what}: the file has a header and no rows", file=self.file, row=2)


def parse_table(text: str, file: str, delimiter: str = ",") -> Table:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header: list[str] | None = None
    records: list[Record] = []
    start = 1  # the line the next record starts on
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            raise DataError(_problem(error, start, reader.line_num), file=file, row=start) from None
        end = reader.line_num
        if header is None:
            header = cells
        elif cells:
            if end > start and len(cells) != len(header):
                raise DataError(
                    f"the record starting at line {start} runs to line {end} and has {len(cells)} field(s) where the "
                    f"header has {len(header)}: a stray or unclosed quote (\") joined the lines after it",
                    file=file,
                    row=start,
                )
            records.append((end, cells))
        start = end + 1
    if header is None:
        raise DataError("the file is empty", file=file, row=1)
    return Table(file, header, records)


def read_table(path: Path, file: str | None = None, delimiter: str = ",") -> Table:
    """The table in ``path``; errors name it as ``file`` (default: the path)."""
    name = str(path) if file is None else file
    return parse_table(decode_text(path.read_bytes(), name), name, delimiter)


def _problem(error: csv.Error, start: int, line: int) -> str:
    where = f"the record starting at line {start}" + (f" (read up to line {line})" if line > start else "")
    if "field larger than field limit" in str(error):
        return (
            f"{where} has a field longer than {csv.field_size_limit():,} characters: a stray or unclosed quote (\") "
            "may have joined the lines after it into one field"
        )
    return f"{where} cannot be read as CSV: {error}"
