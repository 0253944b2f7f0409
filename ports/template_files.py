"""The template files a benchmark's items are expanded from (``culturebias expand``), and where the items go."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Protocol

from culturebias.domain.bbq.model import ContextCondition


class KoBBQTemplateFiles(Protocol):
    def rows(self) -> list[dict[str, str]]:
        """The rows of ``KoBBQ_templates.tsv``."""
        ...


class CBBQTemplateFiles(Protocol):
    conditions: tuple[ContextCondition, ...]  # the context conditions, in the order their items are written

    def categories(self) -> list[str]:
        """The categories the files hold, in name order."""
        ...

    def rows(self, category: str, condition: ContextCondition) -> tuple[list[dict[str, str]], list[dict[str, str]]] | None:
        """The negative and the non-negative question templates of one category and condition; None: it has none."""
        ...


class RowsWriter(Protocol):
    def __call__(self, rows: Iterable[Mapping[str, Any]]) -> int:  # Any: JSON values
        """Write every row (a JSON object) and return how many; nothing is left behind when a row fails."""
        ...
