"""A headline metric within one breakdown of a run (``breakdown = "category:age"``).

The convention (``model.BREAKDOWN_HOW``): a summary that keeps a metric per
category keeps it in a ``by_<kind>`` mapping beside the ``overall`` block, with
the same layout inside, so the breakdown's paths are the headline's with
``overall`` replaced. Works for any benchmark, plugins included, whose summary
follows it; ``available_breakdowns`` lists what a run holds for the error message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from culturebias.domain.headlines import HeadlineMetric, read_path

OVERALL = "overall"


def _split(path: str) -> tuple[list[str], list[str]] | None:
    parts = path.split(".")
    if OVERALL not in parts:
        return None
    i = parts.index(OVERALL)
    return parts[:i], parts[i + 1 :]


def breakdown_metric(metric: HeadlineMetric, breakdown: str) -> HeadlineMetric | None:
    """The metric with its paths moved into the breakdown; None where its paths have no ``overall`` block."""
    kind, _, key = breakdown.partition(":")
    value = _split(metric.value)
    if value is None:
        return None

    def moved(path: str | None) -> str | None:
        split = _split(path) if path is not None else None
        if split is None:
            return None
        head, tail = split
        return ".".join([*head, f"by_{kind}", key, *tail])

    return metric.model_copy(
        update={"value": moved(metric.value), "interval": moved(metric.interval), "label": f"{metric.label} ({breakdown})"}
    )


def available_breakdowns(summary: Any, metric: HeadlineMetric) -> list[str]:  # Any: the benchmark's own RunSummary subclass
    """Every ``kind:value`` of the run whose block holds the metric (empty: none)."""
    split = _split(metric.value)
    if split is None:
        return []
    head, tail = split
    try:
        parent = read_path(summary, ".".join(head)) if head else summary
    except KeyError:
        return []
    names = parent.keys() if isinstance(parent, Mapping) else getattr(type(parent), "model_fields", {})
    found = []
    for name in names:
        if not name.startswith("by_"):
            continue
        blocks = parent.get(name) if isinstance(parent, Mapping) else getattr(parent, name, None)
        if not isinstance(blocks, Mapping):
            continue
        for key, block in blocks.items():
            try:
                read_path(block, ".".join(tail))
            except KeyError:
                continue
            found.append(f"{name[3:]}:{key}")
    return found
