"""TWBias's design cells for ``--sample``: origin group × toxicity, whole sentences (with all their replacements) drawn.

The items are ``(origin group, sentence)`` pairs; a sentence is its own unit, so
each drawn sentence is scored with every replacement of every specification
its origin group takes part in.
"""

from __future__ import annotations

from culturebias.domain.stratified import Strata
from culturebias.domain.twbias.model import BiasSentence

GroupSentence = tuple[str, BiasSentence]  # (origin group key, sentence)

STRATA: Strata[GroupSentence] = Strata(
    cells=("group", "toxicity"),
    unit="sentence",
    cell_of=lambda pair: (pair[0], "unlabelled" if pair[1].toxicity is None else str(pair[1].toxicity)),
    unit_of=lambda pair: f"{pair[1].file}:{pair[1].row}",
)
