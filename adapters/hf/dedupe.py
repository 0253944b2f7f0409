"""Identical requests are computed once; progress still counts every request."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Hashable, Sequence, TypeVar

from culturebias.ports.recording import BatchSink

R = TypeVar("R", bound=Hashable)


def unique_requests(requests: Sequence[R]) -> tuple[list[R], dict[R, int], list[int]]:
    """(distinct requests in first-seen order, request → its index, how often each occurs)."""
    position: dict[R, int] = {}
    unique: list[R] = []
    multiplicity: list[int] = []
    for request in requests:
        index = position.get(request)
        if index is None:
            position[request] = len(unique)
            unique.append(request)
            multiplicity.append(1)
        else:
            multiplicity[index] += 1
    return unique, position, multiplicity


def stored_attempt(progress: object, requests: Sequence[R], position: dict[R, int]) -> tuple[BatchSink | None, dict[int, list[int]], dict[int, Any]]:  # Any: stored results of any port
    """(the sink that stores finished batches, distinct index → its requests, what an interrupted attempt stored).

    Without a ``BatchSink`` (a plain progress task) nothing is stored per batch and nothing is known.
    """
    sink = progress if isinstance(progress, BatchSink) else None
    owners: dict[int, list[int]] = defaultdict(list)
    for r, request in enumerate(requests):
        owners[position[request]].append(r)
    known: dict[int, Any] = {}  # Any: stored results of any port
    if sink is not None:
        for i, members in owners.items():
            stored = sink.known(members[0])
            if stored is not None:
                known[i] = stored
    return sink, owners, known
