"""What checking a policy reads: finished runs by reference, and what the benchmarks declare."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.summary import RunSummary


@runtime_checkable
class RunReader(Protocol):
    """Finished runs named by a reference (a run folder, a summary.json, or a run id in a store)."""

    def summary(self, ref: str) -> RunSummary:
        """The run's typed summary; a ``DataError`` naming the reference where there is none."""
        ...

    def where(self, ref: str) -> str:
        """Where the run was read from, for messages and the verdict."""
        ...

    def items(self, ref: str) -> Sequence[Any] | None:  # Any: ItemRecords or their JSON
        """The run's stored item records (``domain.audit.ItemRecord``), in recorded order; None where none are at hand."""
        ...


@runtime_checkable
class BenchmarkCatalog(Protocol):
    """The registered benchmarks as a policy sees them."""

    def names(self) -> list[str]: ...

    def title(self, benchmark: str) -> str: ...

    def headline_metrics(self, benchmark: str) -> tuple[HeadlineMetric, ...]: ...

    def unit_values(self, benchmark: str) -> Any:  # Any: each benchmark's unit-values function
        """The benchmark's ``unit_values`` function (``domain.policy.paired.UnitValuesOf``), or None."""
        ...
