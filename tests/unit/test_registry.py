"""The one registry: every declared piece is complete, names are checked, the docs' table agrees."""

from __future__ import annotations

import inspect
import re
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from culturebias.domain.model_options import ModelOptions
from culturebias.bootstrap.registry import (
    BACKENDS,
    BENCHMARKS,
    CAPABILITIES,
    STORES,
    BackendDescriptor,
    BenchmarkDescriptor,
    Registry,
    registry,
)
from culturebias.bootstrap.registry import benchmark_problems as registration_problems
from culturebias.bootstrap.settings import StoreSettings
from culturebias.domain.errors import ConfigError, PluginError, UnknownNameError
from culturebias.domain.summary import RunSummary

DOCS = Path(__file__).resolve().parents[2] / "docs"


def benchmark_problems(descriptor: BenchmarkDescriptor) -> list[str]:
    """Everything a benchmark declaration lacks; empty when it is complete."""
    problems = []
    for field in ("name", "title", "culture", "language", "data_licence"):
        if not getattr(descriptor, field):
            problems.append(f"no {field}")
    try:
        service = descriptor.service_class()
        for method in ("preflight", "run"):
            if not callable(getattr(service, method, None)):
                problems.append(f"service has no {method}()")
        run = getattr(service, "run", None)
        if run is not None and list(inspect.signature(run).parameters)[1:] != ["ctx", "dataset", "plan"]:
            problems.append("service.run is not run(ctx, dataset, plan)")
        if not issubclass(descriptor.options_model(), BaseModel):
            problems.append("options is not a pydantic model")
        source = descriptor.source_class()
        for method in ("describe", "fingerprint", "load"):
            if not callable(getattr(source, method, None)):
                problems.append(f"dataset source has no {method}()")
        summary = descriptor.summary_model()
        if not issubclass(summary, RunSummary):
            problems.append("summary is not a RunSummary")
        elif typing.get_args(summary.model_fields["benchmark"].annotation) != (descriptor.name,):
            problems.append("summary.benchmark is not Literal[<name>]")
        if not callable(getattr(descriptor.report_writer(), "write", None)):
            problems.append("report writer has no write()")
        if descriptor.expander is not None and not callable(descriptor.expand_function()):
            problems.append("expander is not callable")
    except PluginError as error:
        problems.append(str(error))
    return problems + registration_problems(descriptor)


@pytest.mark.parametrize("descriptor", BENCHMARKS, ids=lambda d: d.name)
def test_every_benchmark_is_declared_completely(descriptor):
    assert benchmark_problems(descriptor) == []


def test_a_benchmark_that_lacks_a_piece_is_caught():
    complete = BENCHMARKS[0]
    broken = BenchmarkDescriptor(**{**complete.__dict__, "summary": "culturebias.domain.summary:RunSummaryy"})
    assert any("RunSummaryy" in p for p in benchmark_problems(broken))
    wrong = BenchmarkDescriptor(**{**complete.__dict__, "name": "other"})
    assert "summary.benchmark is not Literal[<name>]" in benchmark_problems(wrong)
    headless = BenchmarkDescriptor(**{**complete.__dict__, "headlines": ()})
    assert "field 'headlines' is missing" in benchmark_problems(headless)
    misplaced = complete.headline_metrics()[0].model_copy(update={"interval": "metrics.nowhere"})
    elsewhere = BenchmarkDescriptor(**{**complete.__dict__, "headlines": (misplaced,)})
    assert any("has no field 'metrics.nowhere'" in p for p in benchmark_problems(elsewhere))


def test_a_headline_direction_says_which_value_is_better():
    kobbq = {m.name: m for m in registry().benchmark("kobbq").headline_metrics()}
    assert kobbq["diff_bias_amb"].better(-0.01, 0.05) and not kobbq["diff_bias_amb"].better(0.2, -0.1)
    assert kobbq["acc_amb"].better(0.9, 0.5)
    cbbq = {m.name: m for m in registry().benchmark("cbbq").headline_metrics()}
    assert cbbq["s_amb"].better(0.1, 0.3)
    assert kobbq["diff_bias_amb"].direction_words() == "closer to 0 is better"


@pytest.mark.parametrize("descriptor", BACKENDS, ids=lambda d: d.name)
def test_every_backend_declares_its_options_and_capabilities(descriptor: BackendDescriptor):
    assert issubclass(descriptor.options_model(), ModelOptions)
    assert callable(descriptor.create())
    assert descriptor.capabilities and set(descriptor.capabilities) <= set(CAPABILITIES)
    defaults = descriptor.options_model()()  # every option has a default
    assert isinstance(defaults, ModelOptions)
    assert list(inspect.signature(descriptor.create()).parameters)[:2] == ["options", "cache_dir"]


@pytest.mark.parametrize("descriptor", STORES, ids=lambda d: d.name)
def test_every_store_opens(descriptor, tmp_path):
    if descriptor.takes_settings:  # a server store: opened against a real server in the contract suite
        with pytest.raises(ConfigError, match=f"store.backend={descriptor.name} needs store.dsn"):
            descriptor.open(None, StoreSettings(backend=descriptor.name))
        return
    store = descriptor.open(tmp_path / (descriptor.default_location or "unused"))
    assert store.find_runs() == []
    store.close()


@pytest.mark.parametrize(
    ("lookup", "typo", "suggestion"),
    [("benchmark", "kobq", "kobbq"), ("backend", "onxx", "onnx"), ("store", "sqlit", "sqlite")],
)
def test_unknown_names_are_typed_errors_with_the_allowed_values(lookup, typo, suggestion):
    with pytest.raises(UnknownNameError) as caught:
        getattr(registry(), lookup)(typo)
    assert f"did you mean {suggestion!r}" in str(caught.value)
    assert suggestion in caught.value.allowed


def test_names_are_registered_once():
    table = Registry()
    with pytest.raises(PluginError, match="already registered"):
        table.benchmarks.add(BENCHMARKS[0])


def test_the_docs_benchmark_table_lists_every_registered_benchmark():
    """docs/benchmarks/index.md's table is generated from the registry: a row per benchmark, its culture and language."""
    from culturebias.bootstrap.reference_pages import render

    assert "<!-- generated:benchmarks -->" in (DOCS / "benchmarks" / "index.md").read_text(encoding="utf-8")
    text = render("<!-- generated:benchmarks -->")
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| (.+) \|$", text, re.MULTILINE)}
    for descriptor in registry().benchmarks.all():
        assert isinstance(descriptor, BenchmarkDescriptor)
        assert descriptor.name in rows, f"the docs' benchmark table has no row for {descriptor.name}"
        assert descriptor.culture in rows[descriptor.name] and descriptor.language in rows[descriptor.name]
        for headline in descriptor.headline_metrics():
            assert f"`{headline.name}`" in rows[descriptor.name]
