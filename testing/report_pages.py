"""Report pages of every benchmark without running a model: the stored reference summaries, dressed as runs.

``tests/fixtures/reference_summaries`` keeps the number-bearing part of a small run of each
benchmark (metrics, counts, details, repeats, limit); ``reference_summary`` adds the envelope a
run writes around it (run id, model, data, times) and validates it as the benchmark's typed
summary, so its report.md, figures, report.html and a comparison can be written in a second.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import culturebias
from culturebias.bootstrap.registry import registry

FIXTURES = Path(culturebias.__file__).resolve().parent / "tests" / "fixtures" / "reference_summaries"
# One reference run per benchmark: the most complete of the stored ones.
PER_BENCHMARK = {
    "twbias": "twbias_replay",
    "kobbq": "kobbq_replay",
    "cbbq": "cbbq_replay",
    "mcbe": "mcbe_tiny_sampled_repeats",  # its overall is measured (mcbe_tiny reads no BS rating)
    "libra": "libra_tiny",
}


def reference_summary(name: str, run_id: str = "run-1", model: str = "example-org/model-7b", **changes: Any) -> Any:  # Any: a benchmark's own summary model
    """The typed summary of stored reference run ``name`` (``kobbq_replay``), as if ``model`` had run it."""
    content = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    benchmark = content["benchmark"]
    payload = {
        "benchmark": benchmark,
        "run_id": run_id,
        "created_at": "2026-01-01T00:00:00Z",
        "finished_at": "2026-01-01T00:05:00Z",
        "culturebias_version": culturebias.__version__ if hasattr(culturebias, "__version__") else "0",
        "model": {"generator": {"backend": "hf", "model": model}},
        "data": {"source": f"bundled {benchmark} data", "fingerprint": content["data_fingerprint"]},
        "config": {},
        "config_fingerprint": "0" * 16,
        "limit": content.get("limit"),
        "repeats": content.get("repeats"),
        "metrics": content["metrics"],
        "counts": content["counts"],
        "details": content["details"],
        **changes,
    }
    return registry().benchmark(benchmark).summary_model().model_validate(payload)


def write_run_report(summary: Any, out: Path) -> Path:  # Any: a benchmark's own summary model
    """report.md, its figures and report.html of ``summary`` in ``out``; the path of report.html."""
    from culturebias.adapters.reports.html.run_report import HtmlRunReport, WithHtml

    descriptor = registry().benchmark(summary.benchmark)
    out.mkdir(parents=True, exist_ok=True)
    html = HtmlRunReport(None, title=descriptor.title, headlines=descriptor.headline_metrics(), language=descriptor.language)
    written = WithHtml(descriptor.report_writer()(), html).write(summary, out)
    return next(p for p in written if Path(p).name == "report.html")


def write_comparison(summaries: list[Any], out: Path) -> Path:  # Any: a benchmark's own summary model
    """comparison.json, comparison.md and comparison.html of ``summaries`` in ``out``; the path of comparison.html."""
    from culturebias.bootstrap.api import compare_runs

    result = compare_runs(summaries, out=out, allow_data_mismatch=True)
    return next(p for p in result.report_paths if Path(p).name == "comparison.html")
