"""Progress reporting for long runs: the CLI draws a bar, an embedding host gets callbacks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """One step of one stage: ``done`` of ``total`` (None when unknown) units of ``stage``."""

    stage: str
    done: int
    total: int | None
    finished: bool = False


@runtime_checkable
class ProgressTask(Protocol):
    def advance(self, n: int = 1) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class ProgressReporter(Protocol):
    def task(self, description: str, total: int | None) -> ProgressTask: ...
