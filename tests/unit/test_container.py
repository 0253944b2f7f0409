"""The DI container: swapping a store or a backend is a configuration change."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from culturebias.adapters.stores.jsonl_store import JsonlResultStore
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.bootstrap import registry
from culturebias.bootstrap.container import make_container, make_context_factory
from culturebias.bootstrap.settings import load_settings
from culturebias.domain.errors import ConfigError


def container(tmp_path: Path, *assignments: str, benchmark: str = "twbias"):
    return make_container(benchmark, load_settings(None, list(assignments)), tmp_path)


def test_store_is_chosen_by_configuration(tmp_path):
    assert isinstance(container(tmp_path).store(), SQLiteResultStore)
    assert (tmp_path / "results.sqlite").exists()
    jsonl = container(tmp_path, "store.backend=jsonl", f"store.path={tmp_path / 'elsewhere'}").store()
    assert isinstance(jsonl, JsonlResultStore)
    assert jsonl.root == tmp_path / "elsewhere"


class FakeBackend:
    built: list[str] = []

    def __init__(self, settings, cache_dir):
        FakeBackend.built.append(settings.path)
        self.settings = settings

    def scorer(self):
        return ("scorer", self.settings.path)

    def templater(self):
        return ("templater", self.settings.path)

    def generator(self):
        return ("generator", self.settings.path)

    def pseudo_scorer(self):
        return ("pseudo", self.settings.path)


def test_backend_is_chosen_by_configuration_and_built_lazily_once(tmp_path, monkeypatch):
    module = type(sys)("fake_backend_module")
    module.create_backend = FakeBackend
    monkeypatch.setitem(sys.modules, "fake_backend_module", module)
    monkeypatch.setitem(registry.MODEL_BACKENDS, "fake", "fake_backend_module:create_backend")
    FakeBackend.built = []
    c = container(tmp_path, "model.backend=fake", "model.path=/models/x")
    ctx = make_context_factory(c)("run-1")
    assert FakeBackend.built == [], "no model is loaded before a port is needed"
    assert ctx.ports.scorer.get() == ("scorer", "/models/x")
    assert ctx.ports.generator.get() == ("generator", "/models/x")
    assert FakeBackend.built == ["/models/x"]


def test_unknown_backend_store_and_benchmark_are_named(tmp_path):
    c = container(tmp_path, "model.backend=tensorrt")
    with pytest.raises(ConfigError, match="model.backend 'tensorrt'"):
        c.model_backend()
    with pytest.raises(ConfigError, match="store.backend"):
        container(tmp_path, "store.backend=postgres")
    with pytest.raises(ConfigError, match="unknown benchmark"):
        container(tmp_path, benchmark="nope").service()


def test_the_judge_follows_the_model_unless_configured(tmp_path):
    from culturebias.bootstrap.container import judge_model_settings

    settings = load_settings(None, ["model.path=/m"])
    assert judge_model_settings(settings) is None
    settings = load_settings(None, ["model.path=/m", "judge.path=/j"])
    judge = judge_model_settings(settings)
    assert judge.path == "/j" and judge.backend == "hf"


def test_json_logs_on_demand(capsys):
    import structlog

    from culturebias.bootstrap.logging import configure_logging

    configure_logging("json", "info")
    structlog.get_logger("t").info("hello", run_id="r1", n=3)
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert json.loads(line)["event"] == "hello" and json.loads(line)["n"] == 3
    configure_logging("console", "info")


def test_judge_replies_are_stored_for_resume(tmp_path, monkeypatch):
    from culturebias.adapters.scripted.backend import ScriptedGenerator
    from culturebias.domain.requests import ChatMessage
    from culturebias.domain.runs import RunManifest
    from culturebias.ports.judging import JudgeRequest

    asked: list[str] = []

    def reply(request, prompt):
        asked.append(prompt)
        return "7"

    class JudgeBackend(FakeBackend):
        def generator(self):
            return ScriptedGenerator(reply)

    module = type(sys)("fake_judge_backend")
    module.create_backend = JudgeBackend
    monkeypatch.setitem(sys.modules, "fake_judge_backend", module)
    monkeypatch.setitem(registry.MODEL_BACKENDS, "fake", "fake_judge_backend:create_backend")
    c = container(tmp_path, "model.backend=fake", "run.progress=false")
    c.store().create_run(RunManifest(run_id="r", benchmark="mcbe", config={}, config_fingerprint="c", data_fingerprint="d"))
    request = JudgeRequest(messages=(ChatMessage("user", "rate 0-10"),), low=0, high=10)
    first = make_context_factory(c)("r").judge().judge([request])
    again = make_context_factory(c)("r").judge().judge([request])
    assert first[0].value == again[0].value == 7
    assert len(asked) == 1, "a resumed run does not ask the judge again"
    assert len(c.store().load_results("r", "generation")) == 1
