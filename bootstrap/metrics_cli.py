"""``culturebias list --metrics [BENCHMARK]``: each headline metric as a policy names it, its direction, range and
the validity rules that guard it (PROTOCOLS §6)."""

from __future__ import annotations

import json
from typing import Any

from culturebias.domain.errors import ConfigError
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


def list_metrics(benchmark: str | None, output: str) -> int:
    from culturebias.bootstrap.registry import BenchmarkDescriptor, registry

    descriptors = [d for d in registry().benchmarks.all() if isinstance(d, BenchmarkDescriptor)]
    if benchmark is not None:
        chosen = [d for d in descriptors if d.name == benchmark]
        if not chosen:
            raise ConfigError(f"unknown benchmark {benchmark!r} (registered: {', '.join(d.name for d in descriptors)})")
        descriptors = chosen
    entries = [e for d in descriptors for e in metric_entries(d.name, d.headline_metrics(), d.validity_rules())]
    if output == "json":
        print(json.dumps(entries, ensure_ascii=False, indent=2))
        return 0
    for d in descriptors:
        print(f"{d.name} ({d.title}):")
        for e in (e for e in entries if e["benchmark"] == d.name):
            print(f"  {e['metric']}: {e['label']}; {e['direction']}; range {e['range']}")
            if not e["validity"]:
                print("    validity: no rule declared (PROTOCOLS §6)")
            for r in e["validity"]:
                print(f"    validity {r['rule']}: fails when {r['threshold']} — {r['meaning']}")
    return 0
