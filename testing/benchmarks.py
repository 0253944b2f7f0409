"""A benchmark's declared pieces, looked up by name for tests: its headline values, comparer and comparison report."""

from __future__ import annotations

from culturebias.adapters.reports.comparison_report import ComparisonReport
from culturebias.application.compare import Comparer
from culturebias.bootstrap.registry import registry
from culturebias.domain.leaderboard import Headline, headline as headline_of
from culturebias.domain.summary import RunSummary


def headline(summary: RunSummary) -> Headline:
    """The run's headline metrics as its benchmark's descriptor declares them."""
    return headline_of(summary, registry().benchmark(summary.benchmark).headline_metrics())


def comparer(benchmark: str) -> Comparer:
    return registry().benchmark(benchmark).comparer()


def comparison_report(benchmark: str) -> ComparisonReport:
    """comparison.md's writer with the benchmark's own title and sections."""
    descriptor = registry().benchmark(benchmark)
    return ComparisonReport(descriptor.title, descriptor.comparison_sections_function())
