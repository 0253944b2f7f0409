"""``--sample N`` in a protocol service: the items of a seeded stratified sample, and the block the summary records."""

from __future__ import annotations

from typing import Any, Callable, Sequence, TypeVar

from culturebias.domain.stratified import SampleBlock, Strata, draw_sample

T = TypeVar("T")


def sampled_items(
    items: Sequence[T], options: Any, run_seed: int, strata: Strata[T] | None, unit_of: Callable[[T], str] | None = None  # Any: the benchmark's own options model
) -> tuple[list[T], SampleBlock | None]:
    """``items`` as ``protocol.sample`` draws them (seed ``protocol.sample_seed``, else ``run.seed``); all without it."""
    n = getattr(options, "sample", None)
    if n is None:
        return list(items), None
    seed = getattr(options, "sample_seed", None)
    return draw_sample(items, n, run_seed if seed is None else seed, strata, unit_of=unit_of)
