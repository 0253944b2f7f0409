"""The (model, benchmark) pairs of a sweep, run by an executor that bootstrap wires (this process or Ray tasks)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Protocol, Sequence


@dataclass(frozen=True)
class PairTask:
    model: str
    benchmark: str
    out: Path  # the pair's output folder
    resume: bool


@dataclass(frozen=True)
class PairOutcome:
    """How one pair ended: its run (None when none was created) and, for a failed pair, its error."""

    model: str
    benchmark: str
    run_id: str | None
    error: str | None = None  # "ErrorType: message"
    worker: str | None = None  # pid@host of the process that ran it elsewhere; None: this process
    # Run elsewhere: the files of its output folder, by relative path, to write into the pair's folder here.
    files: Mapping[str, bytes] | None = None


class PairEvaluator(Protocol):
    def __call__(self, model: str, benchmark: str, out: Path, resume: bool) -> str:
        """Evaluate the pair into the sweep's store and ``out``; returns its run id."""
        ...


class PairExecutor(Protocol):
    def run(
        self, tasks: Sequence[PairTask], on_start: Callable[[PairTask], None], on_done: Callable[[PairOutcome], None]
    ) -> None:
        """Run every task, a failing one included: ``on_start`` before a task runs, ``on_done`` in this process as it ends."""
        ...
