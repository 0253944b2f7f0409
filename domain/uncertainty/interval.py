"""A confidence interval of one headline metric, as stored in summary.json (issue 13, point 2).

``n`` counts the resampling units (``unit`` names them: sentence pair, template,
instance, triplet), not the answers or requests behind them. ``low``/``high``
are null when the metric itself is undefined; ``note`` then says why, and it
also says when an interval is not a bootstrap one (one unit, constant data) or
when BCa fell back to the percentile method.
"""

from __future__ import annotations

from typing import Literal

from culturebias.domain.summary import Block, Count, Number

Method = Literal["BCa", "percentile"]

DEFAULT_LEVEL = 0.95
DEFAULT_RESAMPLES = 2000


class Interval(Block):
    low: Number
    high: Number
    level: float = DEFAULT_LEVEL
    n: Count  # resampling units the metric is computed over
    unit: str  # what one resampled unit is, e.g. "template"
    # The method that gave low/high; "none" when no resampling could (n < 2, constant data, undefined metric).
    method: Method | Literal["none"]
    resamples: Count
    seed: int
    note: str | None = None

    @property
    def defined(self) -> bool:
        return self.low is not None and self.high is not None

    def contains(self, value: float | None, tolerance: float = 1e-9) -> bool:
        low, high = self.low, self.high
        if value is None or low is None or high is None:
            return False
        return low - tolerance <= value <= high + tolerance
