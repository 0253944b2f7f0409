"""A confidence interval of one headline metric, as stored in summary.json (issue 13, point 2).

``n`` counts the resampling units (``unit`` names them: sentence pair, template,
instance, triplet), not the answers or requests behind them. ``low``/``high``
are null when the metric itself is undefined; ``note`` then says why, and it
also says when an interval is not a bootstrap one (one unit, constant data) or
when BCa fell back to the percentile method.
"""

from __future__ import annotations

from pydantic import Field

from typing import Literal

from culturebias.domain.summary import Block, Count, Number

Method = Literal["BCa", "percentile"]
# Where every resample gives the same value (all answers alike, a proportion at 0 or 1): an interval that accounts
# for n instead of the zero-width bootstrap (domain/uncertainty/score.py; PROTOCOLS §5 "Intervals at the edges").
ScoreMethod = Literal["Wilson", "Clopper-Pearson", "Newcombe", "Newcombe-paired", "MOVER-Wilson"]
SCORE_METHODS: tuple[str, ...] = ("Wilson", "Clopper-Pearson", "Newcombe", "Newcombe-paired", "MOVER-Wilson")

DEFAULT_LEVEL = 0.95
DEFAULT_RESAMPLES = 2000


class Interval(Block):
    low: Number = Field(description="the interval's lower bound; null where the metric is undefined")
    high: Number = Field(description="the interval's upper bound; null where the metric is undefined")
    level: float = Field(DEFAULT_LEVEL, description="the confidence level, 0.95")
    n: Count = Field(description="the resampling units the metric is computed over")
    unit: str = Field(
        description='what one resampled unit is, e.g. "template", "sentence pair", "instance (BEI)", "valid triplet"',
    )
    method: Method | ScoreMethod | Literal["none"] = Field(
        description=(
            'the method that gave the bounds (BCa, percentile); where every resample gives the same value, the score '
            "interval that replaced the zero-width one (Wilson, Clopper-Pearson, Newcombe, Newcombe-paired, "
            'MOVER-Wilson; the note names its effective n); "none" when no method could (n < 2, constant data '
            "without a score interval, undefined metric)"
        ),
    )
    resamples: Count = Field(description="how many bootstrap resamples were drawn (run.bootstrap_resamples)")
    seed: int = Field(description="the resampling seed (run.seed)")
    note: str | None = Field(
        None,
        description=(
            "why the interval is not an ordinary one (zero width, percentile in place of BCa, undefined); null "
            "otherwise"
        ),
    )

    @property
    def defined(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def zero_width_resampling(self) -> bool:
        """Bounds equal and not a score interval: a resampling that did not vary, which is no evidence."""
        return self.defined and self.low == self.high and self.method not in SCORE_METHODS

    def contains(self, value: float | None, tolerance: float = 1e-9) -> bool:
        low, high = self.low, self.high
        if value is None or low is None or high is None:
            return False
        return low - tolerance <= value <= high + tolerance


def plural_unit(unit: str, n: int) -> str:
    """A resampling unit, in the plural where n is not 1 (``sentence pair`` → ``sentence pairs``,
    ``instance (BEI)`` → ``instances (BEI)``)."""
    if n == 1:
        return unit
    name, bracket, note = unit.partition(" (")
    return f"{name if name.endswith('s') else name + 's'}{bracket}{note}"
