"""The comparison of a benchmark that declares no comparison of its own: its headline metrics, run beside run.

Every benchmark's comparison envelope already carries the runs' headlines; this
body adds nothing to them, so a plugin benchmark that declares only its headline
metrics is compared, reported and ranked like a built-in one.
"""

from __future__ import annotations

from collections.abc import Sequence

from culturebias.domain.comparison.envelope import Comparison
from culturebias.domain.summary import Block, RunSummary


class HeadlineComparisonBody(Block):
    """Nothing beyond the envelope's headlines (kept as an object so that the JSON layout is the same)."""


class HeadlineComparison(Comparison[HeadlineComparisonBody]):
    pass


def compare_headlines(labels: Sequence[str], summaries: Sequence[RunSummary]) -> tuple[HeadlineComparisonBody, list[str]]:
    return HeadlineComparisonBody(), []
