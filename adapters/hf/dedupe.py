"""Identical requests are computed once; progress still counts every request."""

from __future__ import annotations

from typing import Hashable, Sequence, TypeVar

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
