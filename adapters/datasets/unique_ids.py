"""Data files whose rows carry an id that must be unique within the file."""

from __future__ import annotations

from pathlib import Path

from culturebias.domain.errors import DataError


def note_first_row(first_row: dict[str, int], value: str, field: str, path: Path, number: int) -> None:
    """Record the row ``value`` (of column ``field``) first appears in; a DataError when an earlier row had it."""
    if value in first_row:
        raise DataError(
            f"duplicate {field} {value!r} (first at row {first_row[value]})", file=str(path), row=number, field=field
        )
    first_row[value] = number
