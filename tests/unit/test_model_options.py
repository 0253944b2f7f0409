"""Backend factories take ``ModelOptions`` (the registry's factory type) and hold it to their own options model."""

from __future__ import annotations

import pytest

from culturebias.adapters.hf.options import HFOptions
from culturebias.domain.model_options import AutoBatch, ModelOptions
from culturebias.adapters.openai.options import OpenAIOptions
from culturebias.domain.errors import ConfigError


@pytest.mark.parametrize(
    "module, given, expected",
    [
        ("culturebias.adapters.hf.backend", ModelOptions(backend="hf"), "HFOptions"),
        ("culturebias.adapters.onnx.backend", HFOptions(backend="onnx"), "OnnxOptions"),
        ("culturebias.adapters.openai.backend", HFOptions(backend="openai"), "OpenAIOptions"),
        ("culturebias.adapters.replay.backend", OpenAIOptions(backend="replay", path="answers.jsonl"), "ReplayOptions"),
    ],
)
def test_a_factory_refuses_options_of_another_model_naming_both(module, given, expected, tmp_path):
    import importlib

    create_backend = importlib.import_module(module).create_backend
    with pytest.raises(ConfigError, match=f"model.backend={given.backend} takes {expected}, not {type(given).__name__}"):
        create_backend(given, tmp_path)


def test_a_port_batches_by_a_number_and_an_unsettled_auto_is_refused():
    assert HFOptions(batch_size=3).settled_batch_size() == 3
    with pytest.raises(ConfigError, match="model.batch_size=auto reached a port of backend 'hf' before the model settled it"):
        HFOptions(batch_size="auto").settled_batch_size()


def test_auto_is_read_once_into_the_auto_batch_policy_and_recorded_as_set():
    from culturebias.bootstrap.settings import load_settings

    options = HFOptions(batch_size=" Auto ")
    assert options.batch_size == AutoBatch(start=64, cpu=16)  # a port never sees the string
    assert options.model_dump(mode="json")["batch_size"] == "auto"
    assert HFOptions.model_validate(options.model_dump()).batch_size == AutoBatch()
    settings = load_settings(None, ["model.batch_size=auto"])
    assert isinstance(settings.model.backend_options().batch_size, AutoBatch)
    assert settings.redacted()["model"]["batch_size"] == "auto"  # the recorded configuration and its fingerprint
    assert load_settings(None, ["model.batch_size=8"]).model.backend_options().batch_size == 8
    with pytest.raises(ConfigError, match="is not a batch size"):
        load_settings(None, ["model.batch_size=0"])
