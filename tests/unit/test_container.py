"""The DI container: swapping a store or a backend is a configuration change."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from culturebias.adapters.stores.jsonl_store import JsonlResultStore
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.domain.model_options import ModelOptions
from culturebias.bootstrap import registry as registry_module
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

    def __init__(self, options, cache_dir):
        FakeBackend.built.append(options.path)
        self.settings = options

    def scorer(self):
        return ("scorer", self.settings.path)

    def templater(self):
        return ("templater", self.settings.path)

    def generator(self):
        return ("generator", self.settings.path)

    def pseudo_scorer(self):
        return ("pseudo", self.settings.path)


def register_fake_backend(monkeypatch, factory) -> None:
    """A process registry of its own with a ``fake`` backend (the real one stays untouched)."""
    table = registry_module.Registry()
    table.backends.add(
        registry_module.BackendDescriptor(
            name="fake", description="test double", factory=factory, options=ModelOptions, capabilities=frozenset({"generate"})
        )
    )
    monkeypatch.setattr(registry_module, "_default", table)


def test_backend_is_chosen_by_configuration_and_built_lazily_once(tmp_path, monkeypatch):
    register_fake_backend(monkeypatch, FakeBackend)
    FakeBackend.built = []
    c = container(tmp_path, "model.backend=fake", "model.path=/models/x")
    ctx = make_context_factory(c)("run-1")
    assert FakeBackend.built == [], "no model is loaded before a port is needed"
    assert ctx.ports.scorer.get() == ("scorer", "/models/x")
    assert ctx.ports.generator.get() == ("generator", "/models/x")
    assert FakeBackend.built == ["/models/x"]


def test_unknown_backend_store_and_benchmark_are_named(tmp_path):
    with pytest.raises(ConfigError, match="unknown backend 'tensorrt'"):
        container(tmp_path, "model.backend=tensorrt")
    with pytest.raises(ConfigError, match="unknown store 'mongodb'"):
        container(tmp_path, "store.backend=mongodb")
    with pytest.raises(ConfigError, match="unknown benchmark"):
        container(tmp_path, benchmark="nope").source()


def test_the_judge_follows_the_model_unless_configured(tmp_path):
    from culturebias.bootstrap.container import judge_model_settings

    settings = load_settings(None, ["model.path=/m"])
    assert judge_model_settings(settings) is None
    settings = load_settings(None, ["model.path=/m", "judge.path=/j"])
    judge = judge_model_settings(settings)
    assert judge.path == "/j" and judge.backend == "hf"
    # A judge on the model's backend inherits its settings; one on another backend takes only its own judge.* keys.
    settings = load_settings(None, ["model.batch_size=4", "judge.path=/j"])
    assert judge_model_settings(settings).batch_size == 4
    settings = load_settings(None, ["model.prefix_cache=false", "model.batch_size=4", "judge.backend=openai", "judge.path=served"])
    judge = judge_model_settings(settings)
    assert judge.backend == "openai" and judge.batch_size == 16 and not hasattr(judge, "prefix_cache")


def test_json_logs_on_demand(capsys):
    import structlog

    from culturebias.bootstrap.logging import configure_logging

    configure_logging("json", "info")
    structlog.get_logger("t").info("hello", run_id="r1", n=3)
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert json.loads(line)["event"] == "hello" and json.loads(line)["n"] == 3
    configure_logging("console", "info")


def test_judge_replies_are_stored_for_resume(tmp_path, monkeypatch):
    from culturebias.testing.scripted import ScriptedGenerator
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

    register_fake_backend(monkeypatch, JudgeBackend)
    c = container(tmp_path, "model.backend=fake", "run.progress=false")
    c.store().create_run(RunManifest(run_id="r", benchmark="mcbe", config={}, config_fingerprint="c", data_fingerprint="d"))
    request = JudgeRequest(messages=(ChatMessage("user", "rate 0-10"),), low=0, high=10, reminder="Just the number.")
    first = make_context_factory(c)("r").judge().judge([request])
    again = make_context_factory(c)("r").judge().judge([request])
    assert first[0].value == again[0].value == 7
    assert len(asked) == 1, "a resumed run does not ask the judge again"
    assert len(c.store().load_results("r", "generation")) == 1


def test_the_resume_identity_holds_the_weights_the_container_reads(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}", encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"w" * 10)
    made = container(tmp_path, f"model.path={folder}", f"run.cache_dir={tmp_path / 'cache'}")
    identity = made.settings().resume_identity(made.model_weights())
    assert set(identity["model_weights"]) == {"config.json", "model.safetensors"}
    hub = container(tmp_path, "model.path=org/some-hub-model")
    assert "model_weights" not in hub.settings().resume_identity(hub.model_weights())
