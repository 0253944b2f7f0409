"""The one record of an input row a loader or a protocol left out: counted and reported, never silent."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SkippedRow(BaseModel):
    """Which row of which file was left out, why, and of what.

    ``reason`` is a short code (``no_origin_term``, ``missing label``, ...) that
    reports group by; ``detail`` says what was found; ``effect`` what the row
    was left out of. ``field`` and ``sample_id`` are given where the input has them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    row: int | None
    reason: str
    field: str | None = None
    sample_id: str | None = None
    detail: str = ""
    effect: str = ""

    def where(self) -> str:
        parts = [f"{self.file} row {self.row}" if self.row is not None else self.file]
        if self.field:
            parts.append(f"field {self.field!r}")
        if self.sample_id:
            parts.append(f"sample {self.sample_id}")
        return ", ".join(parts)
