"""Attribute categories of a bias sentence (PROTOCOLS §1.7: explode the T-A list)."""

from __future__ import annotations

from typing import Mapping

from culturebias.domain.skips import SkippedRow
from culturebias.domain.twbias.model import OTHER_ATTRIBUTE, OTHER_CATEGORY, Attribute, BiasSentence

FIELD = "T-A Combination"


def other_category(attributes: Mapping[str, Attribute]) -> str:
    """The category a ``None`` attribute maps to: that of the table's 其他 row, else "Other"."""
    other = attributes.get(OTHER_ATTRIBUTE)
    return other.category if other is not None else OTHER_CATEGORY


def sentence_categories(sentence: BiasSentence, attributes: Mapping[str, Attribute]) -> tuple[tuple[str, ...], list[SkippedRow]]:
    """One category per T-A pair (duplicates kept, in order) and the pairs that had to be left out."""
    if sentence.target_attributes is None:
        return (), []  # the loader already reported the unparsable list
    if not sentence.target_attributes:
        return (), [
            SkippedRow(
                reason="ta_empty",
                file=sentence.file,
                row=sentence.row,
                field=FIELD,
                detail="the T-A list is empty",
                effect="sentence left out of the category breakdown",
            )
        ]
    categories: list[str] = []
    skips: list[SkippedRow] = []
    for pair in sentence.target_attributes:
        if pair.attribute is None:
            categories.append(other_category(attributes))
        elif pair.attribute in attributes:
            categories.append(attributes[pair.attribute].category)
        else:
            skips.append(
                SkippedRow(
                    reason="attribute_unknown",
                    file=sentence.file,
                    row=sentence.row,
                    field=FIELD,
                    detail=f"attribute {pair.attribute!r} is not in the attribute table",
                    effect="pair left out of the category breakdown",
                )
            )
    return tuple(categories), skips
