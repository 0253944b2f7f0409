"""Where a run's per-item audit trail goes (``domain.audit.ItemRecord``)."""

from __future__ import annotations

from typing import Iterable, Protocol, runtime_checkable

from culturebias.domain.audit import ItemRecord


@runtime_checkable
class ItemLog(Protocol):
    """Keeps each item's record, keyed by ``item_id``: recording an item again replaces it (resume, re-runs)."""

    def record(self, items: Iterable[ItemRecord]) -> None: ...


@runtime_checkable
class Audited(Protocol):
    """A run context that keeps a per-item audit trail (``RunContext`` does; a test's duck-typed context may not)."""

    def items(self) -> ItemLog: ...
