"""KoBBQ's reference data set (e.g. a machine-translated BBQ): asked in the same run, for the rank-sum tests only."""

from __future__ import annotations

from typing import Sequence

from culturebias.domain.kobbq.prompts import KoBBQDataset
from culturebias.domain.bbq.model import Answer, QAItem
from culturebias.domain.kobbq.options import KoBBQOptions


def reference_items(dataset: KoBBQDataset, options: KoBBQOptions) -> list[QAItem]:
    """The reference items a run asks: none without protocol.statistics; the same category filter and limit."""
    if not options.statistics or not dataset.reference:
        return []
    wanted = options.categories
    items = [i for i in dataset.reference if wanted is None or i.category in wanted]
    return items[: options.limit] if options.limit else items


def split_reference(answers: Sequence[Answer], reference: Sequence[QAItem]) -> tuple[list[Answer], list[Answer]]:
    """(answers to the data set, answers to the reference)."""
    ids = {i.sample_id for i in reference}
    return [a for a in answers if a.item.sample_id not in ids], [a for a in answers if a.item.sample_id in ids]
