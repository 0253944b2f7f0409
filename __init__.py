"""culturebias: social-bias evaluation of language models through local cultural lenses.

The public API (typed, embeddable; see docs/api.md)::

    import culturebias
    summary = culturebias.evaluate("kobbq", model={"path": "/models/m"}, options={"limit": 50})
    summary.metrics.overall.acc_amb, summary.run_id
    culturebias.load_summary("runs/kobbq/summary.json")
    culturebias.list_runs("runs/kobbq")
    culturebias.benchmarks(), culturebias.backends(), culturebias.stores()

Errors are the typed ones of ``culturebias.errors``. Layers (each a sub-package,
hexagonal architecture): ``domain`` (pure models and metrics), ``ports``
(typing Protocols), ``application`` (one service per protocol), ``adapters``
(HF, ONNX, OpenAI, stores, reports, ...), ``bootstrap`` (configuration, the
registry, the DI container, the API and the CLI), ``testing`` (fakes and tiny
models for tests).

Importing this package never imports torch or any other heavy backend: the API
is loaded on first use. Log events are standard ``logging`` records under the
``culturebias`` logger, which has a ``NullHandler``: the host's logging
configuration decides where they go (``culturebias.logs``).
"""

from __future__ import annotations

import logging as _logging
from typing import TYPE_CHECKING, Any

_logging.getLogger("culturebias").addHandler(_logging.NullHandler())

__version__ = "0.1.0"

_API = {
    "evaluate": "culturebias.bootstrap.api",
    "evaluate_many": "culturebias.bootstrap.api",
    "plan": "culturebias.bootstrap.api",
    "build_libra": "culturebias.bootstrap.api",
    "load_summary": "culturebias.bootstrap.api",
    "list_runs": "culturebias.bootstrap.api",
    "benchmarks": "culturebias.bootstrap.api",
    "backends": "culturebias.bootstrap.api",
    "stores": "culturebias.bootstrap.api",
    "summary_schema": "culturebias.bootstrap.api",
    "compare": "culturebias.bootstrap.api",
    "leaderboard": "culturebias.bootstrap.api",
    "samples": "culturebias.bootstrap.api",
    "export_samples": "culturebias.bootstrap.api",
    "ItemRecord": "culturebias.domain.audit",
    "sweep": "culturebias.bootstrap.api",
    "check": "culturebias.bootstrap.check",
    "PolicyVerdict": "culturebias.domain.policy.verdict",
    "Settings": "culturebias.bootstrap.settings",
    "ModelSettings": "culturebias.bootstrap.settings",
    "DataSettings": "culturebias.bootstrap.settings",
    "StoreSettings": "culturebias.bootstrap.settings",
    "RunSettings": "culturebias.bootstrap.settings",
    "JudgeSettings": "culturebias.bootstrap.settings",
    "RunSummary": "culturebias.domain.summary",
    "RunManifest": "culturebias.domain.runs",
    "ProgressEvent": "culturebias.ports.progress",
    "RunPlan": "culturebias.domain.run_plan",
}

__all__ = ["__version__", "errors", *_API]

if TYPE_CHECKING:  # what the lazy names below are, for type checkers (the package ships py.typed)
    from culturebias import errors as errors
    from culturebias.bootstrap.api import (
        backends as backends,
        benchmarks as benchmarks,
        build_libra as build_libra,
        compare as compare,
        evaluate as evaluate,
        evaluate_many as evaluate_many,
        export_samples as export_samples,
        leaderboard as leaderboard,
        list_runs as list_runs,
        load_summary as load_summary,
        plan as plan,
        samples as samples,
        stores as stores,
        summary_schema as summary_schema,
        sweep as sweep,
    )
    from culturebias.bootstrap.settings import (
        DataSettings as DataSettings,
        JudgeSettings as JudgeSettings,
        ModelSettings as ModelSettings,
        RunSettings as RunSettings,
        Settings as Settings,
        StoreSettings as StoreSettings,
    )
    from culturebias.domain.audit import ItemRecord as ItemRecord
    from culturebias.domain.run_plan import RunPlan as RunPlan
    from culturebias.domain.runs import RunManifest as RunManifest
    from culturebias.domain.summary import RunSummary as RunSummary
    from culturebias.ports.progress import ProgressEvent as ProgressEvent


def __getattr__(name: str) -> Any:  # Any: the lazily imported public names
    if name in _API:
        import importlib

        value = getattr(importlib.import_module(_API[name]), name)
        globals()[name] = value
        return value
    if name == "errors":
        import importlib

        return importlib.import_module("culturebias.errors")
    raise AttributeError(f"module 'culturebias' has no attribute {name!r}")
