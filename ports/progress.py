"""Progress reporting for long runs."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class ProgressTask(Protocol):
    def advance(self, n: int = 1) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class ProgressReporter(Protocol):
    def task(self, description: str, total: int | None) -> ProgressTask: ...
