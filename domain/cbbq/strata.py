"""CBBQ's design cells for ``--sample``: category × context condition × question polarity, whole templates drawn.

A template is one question polarity with its ambiguous and disambiguated
contexts: its stratum is its category and polarity, with both conditions.
"""

from __future__ import annotations

from culturebias.domain.bbq.model import QAItem
from culturebias.domain.stratified import Strata

STRATA: Strata[QAItem] = Strata(
    cells=("category", "context condition", "question polarity"),
    unit="template",
    cell_of=lambda item: (item.category, item.context_condition, item.question_polarity),
    unit_of=lambda item: item.template_id,
)
