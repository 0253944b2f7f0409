"""KoBBQ's design cells for ``--sample``: category × label type × context condition, whole templates drawn.

A template holds both context conditions (and both questions), so a template's
stratum is its category and label type, and every drawn template brings both
conditions in equal measure.
"""

from __future__ import annotations

from culturebias.domain.bbq.model import QAItem
from culturebias.domain.stratified import Strata

STRATA: Strata[QAItem] = Strata(
    cells=("category", "label type", "context condition"),
    unit="template",
    cell_of=lambda item: (item.category, item.label_annotation or "-", item.context_condition),
    unit_of=lambda item: item.template_id,
)
