"""Dataset sources: each benchmark's loader turns files into domain objects."""

from __future__ import annotations

from typing import Protocol, TypeVar, runtime_checkable

DatasetT_co = TypeVar("DatasetT_co", covariant=True)


@runtime_checkable
class DatasetSource(Protocol[DatasetT_co]):
    def describe(self) -> str:
        """Where the data comes from (a path, 'embedded fixture', ...)."""
        ...

    def fingerprint(self) -> str:
        """A content hash of the input files: stored with the run, checked on resume."""
        ...

    def load(self) -> DatasetT_co: ...
