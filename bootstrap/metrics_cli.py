"""``culturebias list --metrics [BENCHMARK]``: the registered benchmarks' headline metrics and validity rules,
listed by ``adapters/reports/metric_list.py``."""

from __future__ import annotations

from culturebias.adapters.reports.metric_list import metric_entries, metrics_listing
from culturebias.domain.errors import ConfigError


def list_metrics(benchmark: str | None, output: str) -> int:
    from culturebias.bootstrap.registry import BenchmarkDescriptor, registry

    descriptors = [d for d in registry().benchmarks.all() if isinstance(d, BenchmarkDescriptor)]
    if benchmark is not None:
        chosen = [d for d in descriptors if d.name == benchmark]
        if not chosen:
            raise ConfigError(f"unknown benchmark {benchmark!r} (registered: {', '.join(d.name for d in descriptors)})")
        descriptors = chosen
    entries = [e for d in descriptors for e in metric_entries(d.name, d.headline_metrics(), d.validity_rules())]
    print(metrics_listing([(d.name, d.title) for d in descriptors], entries, output))
    return 0
