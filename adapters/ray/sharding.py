"""Which requests travel together to one replica: shards of requests that share a context.

A shard holds whole context groups (every request with the same context, or
masked text, or prompt) so the replica's backend reuses the shared prefix as a
local run does. Small groups are packed together up to ``batch_size`` requests;
a group larger than that is cut into shards of ``batch_size`` (each keeping the
reuse within it), so one long-shared context still spreads over the replicas.
Identical requests are sent once.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Hashable, Sequence

from culturebias.domain.requests import GenerationRequest, LoglikelihoodRequest, PseudoLoglikelihoodRequest


def shard_key(request: Any) -> Hashable:  # Any: a request of any port
    """What requests that should share a replica have in common."""
    if isinstance(request, LoglikelihoodRequest):
        return ("context", request.context)
    if isinstance(request, PseudoLoglikelihoodRequest):
        return ("text", request.text)
    if isinstance(request, GenerationRequest):
        return ("prompt", request.prompt, request.messages)
    raise TypeError(f"no shard key for {type(request).__name__}")


@dataclass(frozen=True)
class Shard:
    """Indices into the distinct-request list, sent to one replica in one call."""

    number: int
    members: tuple[int, ...]


def plan_shards(requests: Sequence[Any], batch_size: int) -> list[Shard]:  # Any: requests of any port
    """Shards of ``requests`` (distinct), in first-seen order of their context."""
    groups: dict[Hashable, list[int]] = defaultdict(list)
    for index, request in enumerate(requests):
        groups[shard_key(request)].append(index)
    size = max(1, batch_size)
    shards: list[tuple[int, ...]] = []
    current: list[int] = []
    for members in groups.values():
        if len(members) > size:
            shards.extend(tuple(members[i : i + size]) for i in range(0, len(members), size))
            continue
        if len(current) + len(members) > size:
            shards.append(tuple(current))
            current = []
        current.extend(members)
    if current:
        shards.append(tuple(current))
    return [Shard(n, members) for n, members in enumerate(shards)]
