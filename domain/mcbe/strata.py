"""McBE's design cells for ``--sample``: the category; a BEI (with all its substitution words) is drawn whole."""

from __future__ import annotations

from culturebias.domain.mcbe.instances import BEI
from culturebias.domain.stratified import Strata

STRATA: Strata[BEI] = Strata(
    cells=("category",),
    unit="BEI",
    cell_of=lambda bei: (bei.category,),
    unit_of=lambda bei: f"{bei.category}|{bei.context}|{bei.sentence}|{'|'.join(bei.words)}",
)
