"""Backend factories take ``ModelOptions`` (the registry's factory type) and hold it to their own options model."""

from __future__ import annotations

import pytest

from culturebias.adapters.hf.options import HFOptions
from culturebias.adapters.model_options import ModelOptions
from culturebias.adapters.openai.options import OpenAIOptions
from culturebias.domain.errors import ConfigError


@pytest.mark.parametrize(
    "module, given, expected",
    [
        ("culturebias.adapters.hf.backend", ModelOptions(backend="hf"), "HFOptions"),
        ("culturebias.adapters.onnx.backend", HFOptions(backend="onnx"), "OnnxOptions"),
        ("culturebias.adapters.openai.backend", HFOptions(backend="openai"), "OpenAIOptions"),
        ("culturebias.adapters.replay", OpenAIOptions(backend="replay", path="answers.jsonl"), "ReplayOptions"),
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
