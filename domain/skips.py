"""The one record of an input row a loader or a protocol left out: counted and reported, never silent."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SkippedRow(BaseModel):
    """Which row of which file was left out, why, and of what.

    ``reason`` is a short code (``no_origin_term``, ``missing label``, ...) that
    reports group by; ``detail`` says what was found; ``effect`` what the row
    was left out of. ``field`` and ``sample_id`` are given where the input has them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str = Field(description="the data file the row is in")
    row: int | None = Field(description="its row (1 = the first line; null for a whole-file issue)")
    reason: str = Field(description="why it was skipped, as a short key")
    field: str | None = Field(None, description="the field that caused it, where one did")
    sample_id: str | None = Field(None, description="the row's id, where it has one")
    detail: str = Field("", description="what was found, in words")
    effect: str = Field("", description="what skipping it changes")

    def where(self) -> str:
        parts = [f"{self.file} row {self.row}" if self.row is not None else self.file]
        if self.field:
            parts.append(f"field {self.field!r}")
        if self.sample_id:
            parts.append(f"sample {self.sample_id}")
        return ", ".join(parts)
