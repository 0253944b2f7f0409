"""LIBRA's per-triplet values of a headline, for the paired baseline test (descriptor ``unit_values``).

The summary keeps every triplet's L(S), L(S_p), L(S_u) and validity
(``details.triplets``); the valid ones are the units, and the statistic of
``domain/libra/intervals.py`` recomputes iCAT (and EiCAT, with the run's bbs
held, its alpha and JSD bins read from its configuration) exactly. A category
or group breakdown keeps that category's or group's triplets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.libra.intervals import HEADLINES, UNIT, libra_statistic
from culturebias.domain.policy.paired import NoUnitValues, UnitValues


def _protocol(summary: Any) -> dict[str, Any]:  # Any: the benchmark's own RunSummary subclass
    protocol = summary.config.get("protocol") if isinstance(summary.config, dict) else None
    return protocol if isinstance(protocol, dict) else {}


def libra_unit_values(summary: Any, records: Sequence[Any] | None, metric: HeadlineMetric, breakdown: str | None) -> UnitValues:  # Any: the benchmark's own RunSummary subclass
    if metric.name not in HEADLINES:
        raise NoUnitValues(f"LIBRA keeps per-triplet values of {', '.join(HEADLINES)} only")
    columns = summary.details.triplets
    kind, _, key = (breakdown or "").partition(":")
    if breakdown is not None and kind not in ("category", "group"):
        raise NoUnitValues(f"per-triplet values are kept by category and group, not by {kind!r}")
    keep = [
        i
        for i, valid in enumerate(columns.valid)
        if valid and (breakdown is None or getattr(columns, kind)[i] == key)
        and None not in (columns.stereotyped[i], columns.anti_stereotyped[i], columns.unrelated[i])
    ]
    if not keep:
        raise NoUnitValues(f"the run holds no valid triplet{' of ' + breakdown if breakdown else ''}")
    values = np.array([[columns.stereotyped[i], columns.anti_stereotyped[i], columns.unrelated[i]] for i in keep], dtype=float)
    block = summary.metrics.overall if breakdown is None else getattr(summary.metrics, f"by_{kind}")[key]
    protocol = _protocol(summary)
    alpha = protocol.get("alpha", "bbs")
    statistic = libra_statistic(block.bbs, None if alpha == "bbs" else float(alpha), protocol.get("jsd_bins", "auto"))
    row = HEADLINES.index(metric.name)
    return UnitValues(UNIT, tuple(columns.id[i] for i in keep), values, lambda chosen: statistic(chosen)[row])
