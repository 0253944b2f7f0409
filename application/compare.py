"""Comparing finished runs: check they are comparable, build the typed comparison, write it.

Reads typed summaries only (what ``evaluate`` returns, ``load_summary`` reads
or a store keeps): no model, no dataset. The statistics are the domain's
(``domain/<bench>/comparison.py``); this module picks the benchmark's, wraps
its body in the common envelope and writes ``comparison.json`` and the report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from culturebias.application.run_benchmark import write_text_atomically
from culturebias.domain.bbq.cbbq_comparison import CBBQComparison, compare_cbbq
from culturebias.domain.bbq.kobbq_comparison import KoBBQComparison, compare_kobbq
from culturebias.domain.bbq.summary import CBBQSummary, KoBBQSummary
from culturebias.domain.comparison.envelope import (
    Comparison,
    check_comparable,
    compared_runs,
    distinct_fingerprints,
)
from culturebias.domain.errors import ConfigError
from culturebias.domain.libra.comparison import LibraComparison, compare_libra
from culturebias.domain.libra.summary import LibraSummary
from culturebias.domain.mcbe.comparison import McBEComparison, compare_mcbe
from culturebias.domain.mcbe.summary import McBESummary
from culturebias.domain.runs import utc_now
from culturebias.domain.summary import RunSummary
from culturebias.domain.twbias.comparison import TWBiasComparison, compare_twbias
from culturebias.domain.twbias.summary import TWBiasSummary
from culturebias.ports.comparison import ComparisonReportWriter

COMPARISON_FILE = "comparison.json"


@dataclass(frozen=True)
class Comparer:
    """A benchmark's comparison: the summary type it reads, its body function and its typed comparison."""

    summary_model: type[RunSummary]
    compare: Callable[[Sequence[str], Sequence[Any]], tuple[Any, list[str]]]
    comparison_model: type[Comparison[Any]]


COMPARERS: dict[str, Comparer] = {
    "twbias": Comparer(TWBiasSummary, compare_twbias, TWBiasComparison),
    "kobbq": Comparer(KoBBQSummary, compare_kobbq, KoBBQComparison),
    "cbbq": Comparer(CBBQSummary, compare_cbbq, CBBQComparison),
    "mcbe": Comparer(McBESummary, compare_mcbe, McBEComparison),
    "libra": Comparer(LibraSummary, compare_libra, LibraComparison),
}


@dataclass
class ComparisonResult:
    comparison: Comparison[Any]
    comparison_path: Path | None
    report_paths: list[Path]


def comparer_of(benchmark: str) -> Comparer:
    if benchmark not in COMPARERS:
        raise ConfigError(f"runs of {benchmark!r} cannot be compared (comparisons exist for: {', '.join(COMPARERS)})")
    return COMPARERS[benchmark]


def build_comparison(summaries: Sequence[RunSummary], allow_data_mismatch: bool = False) -> Comparison[Any]:
    """The typed comparison of finished runs; refuses runs of other benchmarks, schema versions or data."""
    notes = check_comparable(summaries, allow_data_mismatch)
    benchmark = summaries[0].benchmark
    comparer = comparer_of(benchmark)
    for summary in summaries:
        if not isinstance(summary, comparer.summary_model):
            raise ConfigError(f"run {summary.run_id} is not a typed {comparer.summary_model.__name__}")
    runs = compared_runs(summaries)
    body, body_notes = comparer.compare([run.label for run in runs], summaries)
    return comparer.comparison_model(
        benchmark=benchmark,
        created_at=utc_now(),
        runs=runs,
        data_mismatch_allowed=allow_data_mismatch,
        data_fingerprints=distinct_fingerprints(summaries),
        notes=notes + body_notes,
        body=body,
    )


def compare_summaries(
    summaries: Sequence[RunSummary],
    *,
    out_dir: Path | None = None,
    report: ComparisonReportWriter | None = None,
    allow_data_mismatch: bool = False,
) -> ComparisonResult:
    """Compare runs; with ``out_dir`` also write comparison.json (atomically) and the report there."""
    comparison = build_comparison(summaries, allow_data_mismatch)
    if out_dir is None:
        return ComparisonResult(comparison, None, [])
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / COMPARISON_FILE
    write_text_atomically(path, comparison.to_json())
    reports = report.write(comparison, out_dir) if report is not None else []
    return ComparisonResult(comparison, path, reports)
