"""Configuration precedence: defaults < TOML file < environment < --set."""

from __future__ import annotations

import pytest

from culturebias.bootstrap.settings import EMBEDDED_DEFAULT_MODEL, load_settings
from culturebias.domain.errors import ConfigError


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    import os

    for name in list(os.environ):
        if name.startswith("CULTUREBIAS_"):
            monkeypatch.delenv(name)


def test_defaults_use_the_embedded_model_and_sqlite():
    settings = load_settings()
    assert settings.model.backend == "hf"
    assert settings.model.resolved_path() == EMBEDDED_DEFAULT_MODEL
    assert settings.store.backend == "sqlite"
    assert settings.data.path is None


def test_file_then_environment_then_assignments(tmp_path, monkeypatch):
    config = tmp_path / "culturebias.toml"
    config.write_text(
        '[model]\nbackend = "onnx"\nbatch_size = 8\ndtype = "bfloat16"\n'
        '[store]\nbackend = "jsonl"\n[protocol]\ngroups = "ethnicity"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("CULTUREBIAS_MODEL__BATCH_SIZE", "4")
    monkeypatch.setenv("CULTUREBIAS_DATA__PATH", "/data/twbias")
    settings = load_settings(config, ["model.dtype=float16", "protocol.groups=gender", "protocol.prompt_types=1,2"])
    assert settings.model.backend == "onnx"  # file
    assert settings.model.batch_size == 4  # environment beats file
    assert settings.model.dtype == "float16"  # --set beats file
    assert settings.data.path == "/data/twbias"
    assert settings.store.backend == "jsonl"
    assert settings.protocol == {"groups": "gender", "prompt_types": "1,2"}


def test_environment_is_beaten_by_assignment(monkeypatch):
    monkeypatch.setenv("CULTUREBIAS_MODEL__BACKEND", "openai")
    assert load_settings(None, ["model.backend=hf"]).model.backend == "hf"
    assert load_settings().model.backend == "openai"


def test_unknown_keys_and_bad_values_are_named():
    with pytest.raises(ConfigError, match=r"model\.batchsize"):
        load_settings(None, ["model.batchsize=3"])
    with pytest.raises(ConfigError, match=r"model\.batch_size"):
        load_settings(None, ["model.batch_size=zero"])
    with pytest.raises(ConfigError, match="key=value"):
        load_settings(None, ["model.backend"])
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings("/nonexistent/culturebias.toml")


def test_api_key_is_redacted():
    settings = load_settings(None, ["model.backend=openai", "model.api_key=sk-secret-123"])
    assert settings.model.backend_options().api_key.get_secret_value() == "sk-secret-123"
    assert "sk-secret-123" not in str(settings.redacted())
    assert "sk-secret-123" not in repr(settings)
    assert "sk-secret-123" not in str(settings.model.model_dump())


def test_each_backend_validates_its_own_keys():
    from culturebias.adapters.hf.options import HFOptions
    from culturebias.adapters.openai.options import OpenAIOptions

    hf = load_settings(None, ["model.prefix_cache=false", "model.batch_size=4"]).model.backend_options()
    assert isinstance(hf, HFOptions) and hf.prefix_cache is False and hf.batch_size == 4
    served = load_settings(None, ["model.backend=openai", "model.api_base=http://127.0.0.1:8000/v1", "model.max_concurrency=2"])
    options = served.model.backend_options()
    assert isinstance(options, OpenAIOptions) and options.max_concurrency == 2
    with pytest.raises(ConfigError, match="model.prefix_cache is not a setting of backend 'openai'; it belongs to 'hf', 'onnx'"):
        load_settings(None, ["model.backend=openai", "model.prefix_cache=false"])
    with pytest.raises(ConfigError, match=r"model\.max_concurrency"):
        load_settings(None, ["model.backend=openai", "model.max_concurrency=0"])


def test_the_stored_config_holds_the_backends_options_with_defaults():
    model = load_settings(None, ["model.backend=onnx"]).redacted()["model"]
    assert model["backend"] == "onnx" and model["prefix_cache"] is True and "api_base" not in model


def test_resume_identity_counts_what_changes_numbers_only():
    base = load_settings(None, ["model.batch_size=4"]).resume_identity()
    assert load_settings(None, ["model.batch_size=4", "run.progress=false", "store.backend=jsonl"]).resume_identity() == base
    assert load_settings(None, ["model.batch_size=4", "run.seed=1"]).resume_identity() != base
    assert load_settings(None, ["model.batch_size=8"]).resume_identity() != base
    assert load_settings(None, ["model.batch_size=4", "protocol.limit=3"]).resume_identity() != base
