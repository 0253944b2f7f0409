"""The options of the local (weights-on-this-machine) backends, on top of the shared ``domain.model_options``."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import field_validator

from culturebias.domain.model_options import BoundaryRule, ModelOptions

# Torch's names; which of them exist on this machine is checked when the model loads.
DEVICE_NAMES = "auto, cpu, cuda, cuda:N or mps"
_DEVICE = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")


class LocalModelOptions(ModelOptions):
    """Options of backends that load weights here (hf, onnx)."""

    dtype: Literal["float32", "float16", "bfloat16"] = "float32"
    revision: str | None = None  # the hub revision (branch, tag or commit) of model.path
    max_length: int | None = None  # the longest sequence the model is given (scoring, generation, the batch probe); default its window
    # auto (the tokenizer's own), none, a built-in (twbias-plain, twbias-inst) or a Jinja file: adapters/hf/chat_templates.py
    chat_template: str = "auto"
    # PROTOCOLS §0.1 assigns a token straddling the prompt/response boundary to
    # the response; "authors" counts prompt tokens by tokenising the prompt alone.
    boundary_rule: BoundaryRule = "straddle-to-continuation"
    # Requests sharing a prompt reuse its key/value cache and sentences sharing a start share those tokens;
    # the results are the same, only faster. false: every request on its own.
    prefix_cache: bool = True
    # Greedy generation prefills prompt prefixes shared by several requests once (``adapters/hf/buffered_generation``,
    # the onnx facade ``adapters/hf/shared_generation``): the replies are those of ``model.generate``, faster
    # (perf/README.md, "bbq_generation"). false: ``model.generate`` on whole prompts. Needs prefix_cache; a model
    # whose attention cannot take it (a sliding window) falls back to ``model.generate``, logged once.
    shared_generation: bool = True
    trust_remote_code: bool = False  # let transformers run the model repository's own code
    gguf_file: str | None = None  # the GGUF file inside model.path to load

    @field_validator("device", mode="before")
    @classmethod
    def _device_name(cls, value: object) -> object:
        if isinstance(value, str) and _DEVICE.match(value.strip().lower()):
            return value.strip().lower()
        raise ValueError(f"{value!r} is not a device: choose {DEVICE_NAMES}")

    @field_validator("chat_template")
    @classmethod
    def _chat_template(cls, value: str) -> str:
        from culturebias.adapters.hf.chat_templates import validate_setting

        return validate_setting(value)
