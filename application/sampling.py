"""``--sample N`` in a protocol service: the items of a seeded stratified sample, and the block the summary records."""

from __future__ import annotations

from typing import Any, Callable, Sequence, TypeVar

from culturebias.domain.stratified import SampleBlock, SampleOptions, Strata, draw_sample

T = TypeVar("T")


def sampled_items(
    items: Sequence[T], options: object, run_seed: int, strata: Strata[T] | None, unit_of: Callable[[T], str] | None = None
) -> tuple[list[T], SampleBlock | None]:
    """``items`` as ``protocol.sample`` draws them (seed ``protocol.sample_seed``, else ``run.seed``); all without it.
    ``options``: the benchmark's own options model (each derives from ``SampleOptions``)."""
    if not isinstance(options, SampleOptions) or options.sample is None:
        return list(items), None
    seed = options.sample_seed
    return draw_sample(items, options.sample, run_seed if seed is None else seed, strata, unit_of=unit_of)
