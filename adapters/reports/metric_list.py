"""``culturebias list --metrics``'s listing: each headline metric as a policy names it, its direction, range and
the validity rules that guard it (PROTOCOLS §6), as JSON entries or as text."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.validity import ValidityRule


def _range(metric: HeadlineMetric) -> str:
    low = "-inf" if metric.low is None else f"{metric.low:g}"
    high = "inf" if metric.high is None else f"{metric.high:g}"
    return f"[{low}, {high}]" + (f" {metric.unit}" if metric.unit else "")


def metric_entries(benchmark: str, headlines: tuple[HeadlineMetric, ...], rules: tuple[ValidityRule, ...]) -> list[dict[str, Any]]:  # Any: JSON
    return [
        {
            "benchmark": benchmark,
            "metric": m.name,
            "label": m.label,
            "direction": m.direction_words(),
            "range": _range(m),
            "validity": [
                {"rule": r.name, "statistic": r.statistic, "threshold": r.threshold, "meaning": r.meaning, "min_n": r.min_n}
                for r in rules if m.name in r.guards
            ],
        }
        for m in headlines
    ]


def metrics_listing(benchmarks: Sequence[tuple[str, str]], entries: Sequence[dict[str, Any]], output: str) -> str:  # Any: JSON
    """The entries as JSON (``output == "json"``) or as text, benchmark by benchmark (``benchmarks``: name and title)."""
    if output == "json":
        return json.dumps(list(entries), ensure_ascii=False, indent=2)
    lines = []
    for name, title in benchmarks:
        lines.append(f"{name} ({title}):")
        for e in (e for e in entries if e["benchmark"] == name):
            lines.append(f"  {e['metric']}: {e['label']}; {e['direction']}; range {e['range']}")
            if not e["validity"]:
                lines.append("    validity: no rule declared (PROTOCOLS §6)")
            for r in e["validity"]:
                lines.append(f"    validity {r['rule']}: fails when {r['threshold']} — {r['meaning']}")
    return "\n".join(lines)
