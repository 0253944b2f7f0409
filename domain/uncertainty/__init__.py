"""Bootstrap confidence intervals of headline metrics over resampling units (issue 13, point 2)."""

from culturebias.domain.uncertainty.bootstrap import BCA_MAX_N, mean_interval, unit_interval, unit_intervals
from culturebias.domain.uncertainty.interval import DEFAULT_LEVEL, DEFAULT_RESAMPLES, Interval

__all__ = ["BCA_MAX_N", "DEFAULT_LEVEL", "DEFAULT_RESAMPLES", "Interval", "mean_interval", "unit_interval", "unit_intervals"]
