"""Files of people's judgements read back into a run: the human pairwise winners of McBE's Table 13."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol


class HumanWinnersReader(Protocol):
    def read(self, path: Path) -> Sequence[tuple[int, Mapping[str, object]]]:
        """The file's rows as (row number, fields), in file order: a CSV row's number counts the header as row 1,
        a JSONL row's is its line. A file that cannot be read or parsed is a ``DataError`` naming it (and the row)."""
        ...
