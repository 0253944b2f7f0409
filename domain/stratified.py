"""Stratified samples of a benchmark's items (``--sample N``, ``protocol.sample``): a quick run that represents the data.

A benchmark declares its ``Strata``: the design cells (KoBBQ category × label
type × context condition, ...), how an item names its cells, and the sampling
unit an item belongs to (a KoBBQ template, a TWBias sentence with all its
replacements). Units are drawn whole, so the unit stays the unit the intervals
resample. A unit's stratum is the set of cells its items fall in: a KoBBQ
template holds both context conditions, so each drawn template brings both in
equal measure, and templates of one category and label type form one stratum.

Allocation is proportional: a stratum holding a share p of the items gets
about p × N of the N sampled items (``round`` of that many units of the
stratum's mean size), and at least one unit. So N counts items, as ``--limit``
does, and the sample's size ``n`` is what the drawn units hold (close to N;
above it where every stratum's one unit needs more). Units are drawn without
replacement, seeded, independently per stratum: each stratum's units are
shuffled once by the seed and the stratum's label, and a sample takes the first
units of that order, so with one seed the sample of a larger N holds the sample
of a smaller N (nested: ``check --sequential`` grows its rounds this way).

Intervals on a sample: the bootstrap resamples the drawn units with replacement
and ignores the strata, which estimates the variance of a with-replacement
sample of that many units; drawing without replacement (the finite-population
correction 1 − n/N) and proportional stratification both make the sample's real
variance smaller, so the intervals are conservative (wider) for the population
value, never narrower. ``tests/unit/test_stratified_sample.py`` checks that a 95 %
interval covers the full-data value about 95 % of the time over many seeds.

Without ``Strata`` (a plugin that declares none) the units are one stratum:
a simple random sample of units, and the block says so.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Generic, Literal, Sequence, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from culturebias.domain.errors import ConfigError
from culturebias.domain.validity import ValiditySwitch

T = TypeVar("T")

INTERVAL_NOTE = (
    "intervals resample the drawn units with replacement, ignoring strata and without the finite-population "
    "correction: conservative for the population value"
)


@dataclass(frozen=True)
class Strata(Generic[T]):
    """A benchmark's design cells: names, an item's cell values, and the unit an item is drawn with."""

    cells: tuple[str, ...]  # e.g. ("category", "label type", "context condition")
    unit: str  # what one drawn unit is, e.g. "template"
    cell_of: Callable[[T], tuple[str, ...]]
    unit_of: Callable[[T], str]


class SampleStratum(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    stratum: str = Field(description='its cells, e.g. "age × ST × ambiguous+disambiguated"')
    units: int = Field(description="units drawn from it (at least one)")
    units_in_population: int = Field(description="units it holds in the population")
    items: int = Field(description="items the drawn units hold")
    items_in_population: int = Field(description="items it holds in the population")


class SampleBlock(BaseModel):
    """A run on a seeded sample of the data (``--sample N``): the summary's ``sample`` block."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n: int = Field(description="items the drawn units hold (what was evaluated)")
    population: int = Field(description="items the sample was drawn from (after protocol.categories)")
    requested: int = Field(description="N as asked (--sample N / protocol.sample)")
    strata: list[SampleStratum] = Field(description="every stratum, with what was drawn from it")
    seed: int = Field(description="the sample's seed (protocol.sample_seed, else run.seed)")
    method: Literal["stratified", "simple random", "all"] = Field(
        description="stratified by the benchmark's cells; simple random where it declares none; all where N ≥ population"
    )
    cells: list[str] = Field(default_factory=list, description="the design cells the strata cross")
    unit: str = Field(description="what one drawn unit is (the resampling unit of the intervals)")
    units: int = Field(description="units drawn")
    units_in_population: int = Field(description="units in the population")
    interval_note: str = Field(INTERVAL_NOTE, description="how the intervals treat the sample (a unit bootstrap, conservative)")

    def sentence(self) -> str:
        """"a stratified sample of 296 of 2,280 items (37 of 269 templates, seed 0)"."""
        if self.method == "all":
            return (
                f"all {self.population:,} items: --sample {self.requested} is not smaller than the data "
                f"({self.units_in_population:,} {self.unit}s)"
            )
        return (
            f"a {self.method} sample of {self.n:,} of {self.population:,} items ({self.units:,} of "
            f"{self.units_in_population:,} {self.unit}s, {len(self.strata)} strata, seed {self.seed})"
        )


def draw_sample(
    items: Sequence[T], n: int, seed: int, strata: Strata[T] | None, *, unit_of: Callable[[T], str] | None = None,
    setting: str = "protocol.sample",
) -> tuple[list[T], SampleBlock]:
    """The items of the drawn units, in their data order, and the block describing the draw.

    ``strata`` None: a simple random sample of units (``unit_of``, else each item its own unit).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"{setting} must be a whole number of items, 1 or more; got {n!r}")
    unit = strata.unit_of if strata is not None else (unit_of or (lambda item: str(id(item))))
    unit_name = strata.unit if strata is not None else ("unit" if unit_of is not None else "item")
    members: dict[str, list[int]] = defaultdict(list)
    for index, item in enumerate(items):
        members[unit(item)].append(index)
    by_stratum: dict[str, list[str]] = defaultdict(list)
    for key, indices in members.items():
        by_stratum[_stratum_label(strata, [items[i] for i in indices])].append(key)
    population = len(items)
    if n > population:
        raise ConfigError(
            f"{setting}={n} is more than the {population:,} items in the data"
            + f": choose at most {population:,} (that many runs them all)"
        )
    if n >= population:
        chosen = set(members)
        method: Literal["stratified", "simple random", "all"] = "all"
    else:
        chosen = set()
        for label in sorted(by_stratum):
            keys = stratum_order(by_stratum[label], seed, label)
            size = sum(len(members[k]) for k in keys)
            mean_size = size / len(keys)
            want = max(1, min(len(keys), math.floor(n * size / population / mean_size + 0.5)))
            chosen.update(keys[:want])
        method = "stratified" if strata is not None else "simple random"
    blocks = [
        SampleStratum(
            stratum=label,
            units=sum(k in chosen for k in keys),
            units_in_population=len(keys),
            items=sum(len(members[k]) for k in keys if k in chosen),
            items_in_population=sum(len(members[k]) for k in keys),
        )
        for label, keys in sorted(by_stratum.items())
    ]
    picked = sorted(i for k in chosen for i in members[k])
    block = SampleBlock(
        n=len(picked), population=population, requested=n, strata=blocks, seed=seed, method=method,
        cells=list(strata.cells) if strata is not None else [], unit=unit_name, units=len(chosen),
        units_in_population=len(members),
    )
    return [items[i] for i in picked], block


def stratum_order(keys: Sequence[str], seed: int, label: str) -> list[str]:
    """The stratum's units in the seeded order a sample takes them from: a sample of N holds the first units of it,
    so a larger N's sample holds a smaller N's (nested samples: the rounds of ``check --sequential``)."""
    ordered = sorted(keys)
    random.Random(f"{seed}:{label}").shuffle(ordered)
    return ordered


def _stratum_label(strata: Strata[T] | None, items: Sequence[T]) -> str:
    if strata is None:
        return "all"
    cells = sorted({strata.cell_of(item) for item in items})
    # Per cell position, the values the unit's items take: "age × ST × ambiguous+disambiguated".
    return " × ".join("+".join(sorted({c[j] for c in cells})) for j in range(len(strata.cells)))


def sample_notes(block: SampleBlock | None) -> list[str]:
    """The notes a sampled run carries."""
    if block is None:
        return []
    notes = [f"evaluated {block.sentence()}"]
    if block.method == "simple random":
        notes.append("the benchmark declares no strata: a simple random sample of its units")
    if block.method != "all" and block.n > block.requested:
        notes.append(
            f"the sample holds {block.n} items, more than the {block.requested} asked: every stratum gets at least "
            f"one whole {block.unit}"
        )
    if block.method != "all":
        notes.append(block.interval_note)
    return notes


class SampleOptions(BaseModel):
    """``protocol.sample`` and ``protocol.sample_seed``, shared by every benchmark's options model."""

    sample: int | None = Field(
        None,
        ge=1,
        description="a seeded sample of about N items, stratified by the benchmark's design cells (whole units)",
    )
    sample_seed: int | None = Field(None, description="the sample's seed; default run.seed")
    # Shared here because every benchmark's options model derives from this one (PROTOCOLS §6).
    validity: ValiditySwitch = Field(
        "on",
        description="the headlines' validity rules (PROTOCOLS §6): on, a headline whose answers fail one reads "
        "'not measured'; off, the rules are recorded in the summary and nothing is blocked",
    )

    @field_validator("sample", mode="before")
    @classmethod
    def _not_the_expanders(cls, value: object) -> object:
        if isinstance(value, str) and value.strip() in ("all", "per_template"):
            raise ValueError(
                f"{value.strip()!r} is `culturebias expand kobbq`'s protocol.sample (how templates are expanded); "
                "a run's protocol.sample is a number of items (--sample N)"
            )
        return value

    @model_validator(mode="after")
    def _sample_or_limit(self) -> "SampleOptions":
        if self.sample is not None and getattr(self, "limit", None) is not None:
            raise ValueError(
                "protocol.sample and protocol.limit both set (--sample and --limit): pick one "
                "(--sample N: a representative stratified sample; --limit N: the first N, for debugging)"
            )
        return self
