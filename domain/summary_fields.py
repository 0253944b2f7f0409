"""Field factories the benchmarks' summary models share (each returns a pydantic ``FieldInfo``).

A factory states a repeated field once: its default and the shape of its description. The
field keeps its place in its model (a factory, unlike a base class, does not move it first).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from culturebias.domain.uncertainty.interval import Interval

Intervals = dict[str, Interval]
"""Metric name → its 95% bootstrap interval (the ``intervals`` field of a score block)."""


def bootstrap_intervals(over: str, breakdowns: str | None = None) -> Any:  # Any: pydantic's FieldInfo, typed as the field's value for mypy
    """A score block's ``intervals``: null by default (run.bootstrap_resamples=0, or a summary before schema 2.4).

    ``over`` says what is resampled and which metrics; ``breakdowns`` how a breakdown's block resamples.
    """
    how = f"; {breakdowns}" if breakdowns else ""
    older = "the breakdowns of summaries" if breakdowns else "summaries"
    return Field(
        None,
        description=f"95% bootstrap intervals {over}{how}; null with run.bootstrap_resamples=0 (and in {older} before schema 2.4)",
    )

