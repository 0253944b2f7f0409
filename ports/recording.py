"""Results handed over batch by batch: how a batching backend lets a run store work as it goes.

The recorded ports pass a ``BatchSink`` as the ``progress`` argument of
``loglikelihood`` / ``pseudo_loglikelihood`` / ``generate``. A backend that
batches internally checks ``isinstance(progress, BatchSink)`` and then

- calls ``deliver({request index: result})`` as each batch is done, so the run
  can commit by time and by share of its results, not only when the whole call
  returns (its ``advance`` calls are taken as computed work; the run's progress
  bar counts what it has committed);
- asks ``known(index)`` before running a batch: when every request of a batch
  has a known result (stored by an interrupted attempt at the same requests),
  it skips the batch and uses those results. Batches are planned from the whole
  call as always, so a resumed call runs exactly the batches it would have run.

A backend that ignores all this still works: its results are stored when the
call returns.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, runtime_checkable


@runtime_checkable
class BatchSink(Protocol):
    def advance(self, n: int = 1) -> None: ...

    def close(self) -> None: ...

    def deliver(self, results: Mapping[int, Any]) -> None: ...  # each backend its own result type

    def known(self, index: int) -> Any | None:  # each backend its own result type
        """The stored result of request ``index`` of this call, or None."""
        ...
