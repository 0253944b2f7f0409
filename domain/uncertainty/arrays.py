"""NaN-aware reductions over resampled units (vectorised over any leading batch dimensions)."""

from __future__ import annotations

import numpy as np

from culturebias.domain.array_types import Floats


def ratio(numerator: Floats, denominator: Floats) -> Floats:
    """``numerator / denominator``; NaN where the denominator is 0 (an undefined ratio, as in the metrics)."""
    with np.errstate(all="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


def nan_mean(values: Floats, axis: int) -> Floats:
    """The mean of the finite values along ``axis``; NaN where none is finite."""
    finite = np.isfinite(values)
    count = finite.sum(axis=axis)
    total = np.where(finite, values, 0.0).sum(axis=axis)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)
