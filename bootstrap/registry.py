"""Where each pluggable piece lives, by dotted path, so nothing heavy is imported early.

Adding a backend, a store or a benchmark is one line here plus its module.
"""

from __future__ import annotations

# model.backend → a function ``create_backend(settings: ModelSettings, cache_dir: Path)``
# returning an object with ``scorer()``, ``templater()``, ``generator()`` and
# ``pseudo_scorer()`` methods; each returns the port implementation or raises
# ``CapabilityError`` naming what the backend cannot do.
MODEL_BACKENDS: dict[str, str] = {
    "hf": "culturebias.adapters.hf.backend:create_backend",
    "onnx": "culturebias.adapters.onnx.backend:create_backend",
    "openai": "culturebias.adapters.openai.backend:create_backend",
    "replay": "culturebias.adapters.replay:create_backend",
}

# benchmark → DatasetSource class, constructed as ``Source(path: str | None)``.
DATASET_SOURCES: dict[str, str] = {
    "twbias": "culturebias.adapters.datasets.twbias_files:TWBiasFiles",
    "kobbq": "culturebias.adapters.datasets.kobbq_files:KoBBQFiles",
    "cbbq": "culturebias.adapters.datasets.cbbq_files:CBBQFiles",
    "mcbe": "culturebias.adapters.datasets.mcbe_files:McBEFiles",
    "libra": "culturebias.adapters.datasets.libra_files:LibraFiles",
}

# benchmark → ReportWriter class (no constructor arguments).
REPORTS: dict[str, str] = {
    "twbias": "culturebias.adapters.reports.twbias_report:TWBiasReport",
    "kobbq": "culturebias.adapters.reports.bbq_report:BBQReport",
    "cbbq": "culturebias.adapters.reports.bbq_report:BBQReport",
    "mcbe": "culturebias.adapters.reports.mcbe_report:McBEReport",
    "libra": "culturebias.adapters.reports.libra_report:LibraReport",
}

STORES: dict[str, str] = {
    "sqlite": "culturebias.adapters.stores.sqlite_store:SQLiteResultStore",
    "jsonl": "culturebias.adapters.stores.jsonl_store:JsonlResultStore",
}

# A judge wraps any generator backend (number parsing, clamping, bounded retries).
JUDGE = "culturebias.adapters.judge:GeneratorJudge"
