"""Every property of every summary's JSON Schema (`culturebias schema BENCHMARK`) says what it holds."""

from __future__ import annotations

import pytest

from culturebias.bootstrap.api import summary_schema
from culturebias.bootstrap.registry import registry

BENCHMARKS = sorted(d.name for d in registry().benchmarks.all() if d.name in ("twbias", "kobbq", "cbbq", "mcbe", "libra"))


def properties(schema: dict) -> list[tuple[str, str, dict]]:
    """(model, property, its schema) for the top level and every $defs model."""
    models = [(schema.get("title", "summary"), schema), *schema.get("$defs", {}).items()]
    return [(name, prop, body) for name, model in models for prop, body in model.get("properties", {}).items()]


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_every_property_of_the_summary_schema_has_a_description(benchmark):
    found = properties(summary_schema(benchmark))
    assert len(found) > 100  # the walk reaches the nested models, not only the envelope
    missing = [f"{model}.{prop}" for model, prop, body in found if not str(body.get("description", "")).strip()]
    assert missing == []


def test_the_envelope_says_what_not_measured_means():
    envelope = summary_schema("kobbq")["properties"]
    assert "headline" in envelope["not_measured"]["description"] and envelope["metrics"]["description"]
