"""Comparing finished runs: check they are comparable, build the typed comparison, write it.

Reads typed summaries only (what ``evaluate`` returns, ``load_summary`` reads
or a store keeps): no model, no dataset. The statistics are the domain's
(``domain/<bench>/comparison.py``); the benchmark's descriptor hands them in as a
``Comparer``, and this module wraps
its body in the common envelope and writes ``comparison.json`` and the report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from culturebias.application.compare_pairs import RecordsOf, headline_pairs
from culturebias.application.run_benchmark import write_text_atomically
from culturebias.domain.comparison.envelope import (
    Comparison,
    check_comparable,
    compared_runs,
    distinct_fingerprints,
)
from culturebias.domain.errors import ConfigError
from culturebias.domain.headlines import HeadlineMetric, headline_entries
from culturebias.domain.policy.paired import UnitValuesOf
from culturebias.domain.runs import utc_now
from culturebias.domain.summary import RunSummary
from culturebias.ports.comparison import ComparisonReportWriter

COMPARISON_FILE = "comparison.json"

CompareBody = Callable[[Sequence[str], Sequence[Any]], tuple[Any, list[str]]]  # Any: the benchmark's own summary and comparison body types


@dataclass(frozen=True)
class Comparer:
    """A benchmark's comparison, as its descriptor declares it: the summary type it reads, its body
    function, its typed comparison and the headline metrics every comparison carries."""

    benchmark: str
    summary_model: type[RunSummary]
    compare: CompareBody
    comparison_model: type[Comparison[Any]]  # Any: the benchmark's own body type
    headlines: tuple[HeadlineMetric, ...]
    unit_values: UnitValuesOf | None = None  # per-unit values of a headline: the pairs are then tested


@dataclass
class ComparisonResult:
    comparison: Comparison[Any]  # Any: the benchmark's own body type
    comparison_path: Path | None
    report_paths: list[Path]


def build_comparison(
    summaries: Sequence[RunSummary], comparer: Comparer, allow_data_mismatch: bool = False, records: RecordsOf | None = None
) -> Comparison[Any]:  # Any: the benchmark's own body type
    """The typed comparison of finished runs; refuses runs of other benchmarks, schema versions or data."""
    notes = check_comparable(summaries, allow_data_mismatch)
    benchmark = summaries[0].benchmark
    if benchmark != comparer.benchmark:
        raise ConfigError(f"runs of {benchmark!r} cannot be compared by the comparison of {comparer.benchmark!r}")
    for summary in summaries:
        if not isinstance(summary, comparer.summary_model):
            raise ConfigError(f"run {summary.run_id} is not a typed {comparer.summary_model.__name__}")
    runs = compared_runs(summaries, comparer.headlines)
    labels = [run.label for run in runs]
    body, body_notes = comparer.compare(labels, summaries)
    return comparer.comparison_model(
        benchmark=benchmark,
        created_at=utc_now(),
        runs=runs,
        data_mismatch_allowed=allow_data_mismatch,
        data_fingerprints=distinct_fingerprints(summaries),
        notes=notes + body_notes,
        headline_metrics=list(comparer.headlines),
        headlines={run.label: headline_entries(s, comparer.headlines) for run, s in zip(runs, summaries)},
        headline_pairs=headline_pairs(labels, summaries, comparer.headlines, comparer.unit_values, records),
        body=body,
    )


def compare_summaries(
    summaries: Sequence[RunSummary],
    comparer: Comparer,
    *,
    out_dir: Path | None = None,
    report: ComparisonReportWriter | None = None,
    allow_data_mismatch: bool = False,
    records: RecordsOf | None = None,
) -> ComparisonResult:
    """Compare runs; with ``out_dir`` also write comparison.json (atomically) and the report there.

    ``records`` (run id → its stored item records) lets the pairs of runs be tested on paired units."""
    comparison = build_comparison(summaries, comparer, allow_data_mismatch, records)
    if out_dir is None:
        return ComparisonResult(comparison, None, [])
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / COMPARISON_FILE
    write_text_atomically(path, comparison.to_json())
    reports = report.write(comparison, out_dir) if report is not None else []
    return ComparisonResult(comparison, path, reports)
