"""Benchmark name → protocol service (imported lazily, by dotted path)."""

from __future__ import annotations

import importlib
from typing import Any

from culturebias.domain.errors import ConfigError

SERVICES: dict[str, str] = {
    "twbias": "culturebias.application.twbias.service:TWBiasService",
    "kobbq": "culturebias.application.bbq.service:KoBBQService",
    "cbbq": "culturebias.application.bbq.service:CBBQService",
    "mcbe": "culturebias.application.mcbe.service:McBEService",
    "libra": "culturebias.application.libra.service:LibraService",
}


def import_object(dotted: str) -> Any:
    module_name, _, attribute = dotted.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def service_class(benchmark: str) -> Any:
    try:
        return import_object(SERVICES[benchmark])
    except KeyError:
        raise ConfigError(f"unknown benchmark {benchmark!r}; choose one of {sorted(SERVICES)}") from None
