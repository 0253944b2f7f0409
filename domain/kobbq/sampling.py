"""One sampled item per template: how KoBBQ's released test split was drawn (PROTOCOLS §2, KoBBQ).

``KoBBQ_test_samples.tsv`` holds, for every template, one combination number
``n`` of its expanded samples (``domain/kobbq/templates.py``) and every
sample with that number: both contexts × both questions, in each version.
Versions a and b (the same template with the groups swapped) share their
number, and so do versions c and d: ``n`` names the same pair of people in
both (the numbering of the expansion). So one number is drawn per template
and version pair, uniformly among the pair's combinations, and the released
split is one of the draws: with the numbers read off its sample ids, the
sampler returns its 2,280 rows exactly.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Mapping

PAIRS = {"a": "ab", "b": "ab", "c": "cd", "d": "cd"}


def pair_key(sample_id: str) -> tuple[str, int]:
    """``(template key and version pair, combination number)``: ``age-001a-002-amb-bsd`` → ``("age-001ab", 2)``."""
    category, template, number, *_ = sample_id.split("-")
    return f"{category}-{template[:-1]}{PAIRS.get(template[-1], template[-1])}", int(number)


def numbers_of(sample_ids: Iterable[str]) -> dict[str, int]:
    """The combination number each template's version pair uses in an existing split (e.g. the released test file)."""
    numbers: dict[str, int] = {}
    for sample_id in sample_ids:
        key, number = pair_key(sample_id)
        if numbers.setdefault(key, number) != number:
            raise ValueError(f"{sample_id}: {key} already uses combination {numbers[key]}: not one item per template")
    return numbers


def draw_numbers(samples: Iterable[Mapping[str, object]], seed: int) -> dict[str, int]:
    """One combination number per template and version pair, uniformly at random (seeded)."""
    available: dict[str, set[int]] = defaultdict(set)
    for sample in samples:
        key, number = pair_key(str(sample["sample_id"]))
        available[key].add(number)
    rng = random.Random(seed)
    return {key: rng.choice(sorted(available[key])) for key in sorted(available)}


def sample_per_template(
    samples: Iterable[Mapping[str, object]], seed: int = 0, numbers: Mapping[str, int] | None = None
) -> list[Mapping[str, object]]:
    """The samples of one drawn combination per template and version pair (``numbers`` pins them), in input order."""
    rows = list(samples)
    chosen = dict(numbers) if numbers is not None else draw_numbers(rows, seed)
    return [row for row in rows if chosen.get(pair_key(str(row["sample_id"]))[0]) == pair_key(str(row["sample_id"]))[1]]
