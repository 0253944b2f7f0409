"""Every setting key with its type and default, gathered from the settings and the registered models.

``culturebias run --help`` prints it, and the docs site's configuration reference is
generated from it (``culturebias.bootstrap.reference_pages``); so neither can drift
from what the models accept. Reading a model's keys is ``adapters/docs/setting_keys.py``.
"""

from __future__ import annotations

from pydantic import BaseModel

from culturebias.adapters.docs.setting_keys import SettingKey, keys_text, model_keys


def setting_keys() -> list[SettingKey]:
    """Every key: common sections, each backend's own model.* keys, each benchmark's protocol.* keys."""
    from culturebias.domain.model_options import ModelOptions
    from culturebias.bootstrap.registry import BackendDescriptor, BenchmarkDescriptor, registry
    from culturebias.bootstrap.settings import Settings

    from culturebias.domain.sampling import SamplingSettings

    keys = model_keys("model", ModelOptions, skip=frozenset({"sampling"})) + model_keys("model.sampling", SamplingSettings)
    common = frozenset(ModelOptions.model_fields)
    for backend in registry().backends.all():
        if isinstance(backend, BackendDescriptor):
            keys += model_keys("model", backend.options_model(), owner=f"backend {backend.name}", skip=common)
    for section in ("judge", "store", "data", "run", "ray"):
        annotation = Settings.model_fields[section].annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys += model_keys(section, annotation)
        if section == "judge":  # the judge's backend options: the model.* keys of judge.backend
            judge_options = (
                "every other option of the judge's backend (judge.api_base, judge.api_key_env, judge.timeout_s, "
                "judge.sampling.*, ...); a judge on the evaluated model's backend inherits the model.* keys it does not set"
            )
            keys.append(SettingKey("judge.<option>", "any model.* key of judge.backend", "model.*, on its backend", "", judge_options))
    for benchmark in registry().benchmarks.all():
        if isinstance(benchmark, BenchmarkDescriptor):
            keys += model_keys("protocol", benchmark.options_model(), owner=f"benchmark {benchmark.name}")
    return keys


def reference_text() -> str:
    """``culturebias run --help``'s list of every setting key."""
    return keys_text(setting_keys())
