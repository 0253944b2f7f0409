"""LIBRA's design cells for ``--sample``: the target group; a triplet (its three sentences) is drawn whole."""

from __future__ import annotations

from culturebias.domain.libra.triplets import Triplet
from culturebias.domain.stratified import Strata

STRATA: Strata[Triplet] = Strata(
    cells=("group",),
    unit="triplet",
    cell_of=lambda triplet: (triplet.group,),
    unit_of=lambda triplet: triplet.id,
)
