"""Progress reporters: a tqdm bar on stderr, or silence."""

from __future__ import annotations

import sys


class TqdmTask:
    def __init__(self, description: str, total: int | None):
        from tqdm import tqdm

        self._bar = tqdm(total=total, desc=description, unit="req", file=sys.stderr, dynamic_ncols=True, leave=False)

    def advance(self, n: int = 1) -> None:
        self._bar.update(n)

    def close(self) -> None:
        self._bar.close()


class TqdmProgress:
    def task(self, description: str, total: int | None) -> TqdmTask:
        return TqdmTask(description, total)


class NullTask:
    def __init__(self) -> None:
        self.done = 0

    def advance(self, n: int = 1) -> None:
        self.done += n

    def close(self) -> None:
        pass


class NullProgress:
    def task(self, description: str, total: int | None) -> NullTask:
        return NullTask()
