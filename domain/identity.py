"""Who produced a score: model identity and the numeric provenance of every score."""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ModelIdentity(BaseModel):
    """Everything a cached score depends on besides the request text itself.

    The request text already contains the rendered chat template, so a template
    change changes the key; ``tokenizer`` is a fingerprint of the tokenizer files;
    ``weights`` one of the weight files of a model loaded from this machine (sizes
    and hashes), so a folder whose weights were replaced is another model.
    """

    model_config = ConfigDict(frozen=True)

    backend: str = Field(description="the backend that ran the model: hf, onnx, openai, replay, a plugin's")
    model: str = Field(
        description=(
            "the model's name: a hub id, a local folder, embedded:<name>, gguf:<file>, a served model's name or a "
            "replay file"
        ),
    )
    revision: str | None = Field(
        None,
        description=(
            "the hub revision, the embedded model's package version or a GGUF file's digest; null where there is "
            "none"
        ),
    )
    tokenizer: str | None = Field(
        None,
        description=(
            "a fingerprint of the tokenizer (its full serialisation, special tokens and chat template); null where "
            "unknown"
        ),
    )
    dtype: str = Field("float32", description="the weights' dtype: float32, float16 or bfloat16")
    kind: Literal["causal", "masked", "api", "scripted", "replay"] = Field(
        "causal",
        description=(
            "causal, masked (a masked LM), api (a served model), scripted (a test double) or replay (answers from a"
            " file)"
        ),
    )
    parameters: int | None = Field(
        None,
        description="the model's parameter count; null where unknown (a served model)",
    )
    description: str = Field("", description="a human-readable account of where the model came from")
    weights: str | None = Field(
        None,
        description=(
            "a fingerprint of the weight files of a model loaded from this machine (sizes and hashes); null "
            "otherwise"
        ),
    )

    def cache_key(self) -> str:
        stable = {k: v for k, v in self.model_dump().items() if k not in {"description", "parameters"}}
        if stable["weights"] is None:
            del stable["weights"]  # keys of models without a weights fingerprint stay as they were
        return hashlib.sha256(json.dumps(stable, sort_keys=True).encode()).hexdigest()[:16]


class ScoreProvenance(BaseModel):
    """Numeric settings a score depends on; stored next to every score."""

    model_config = ConfigDict(frozen=True)

    backend: str = Field(description="the backend that computed the scores")
    dtype: str = Field(description="the dtype the scores were computed in")
    device: str = Field("cpu", description="where they were computed: cpu, cuda:N, mps, or the server")
    batch_size: int = Field(1, description="sequences per forward pass (the number model.batch_size=auto settled on)")
    padding_side: str = Field("right", description="which side batches were padded on")
    boundary_rule: str = Field(
        "straddle-to-continuation",
        description=(
            "where a token straddling the prompt/response boundary counts: straddle-to-continuation (PROTOCOLS "
            "§0.1) or authors"
        ),
    )
    boundary_source: str | None = Field(
        None,
        description=(
            "openai backend: how the context/continuation boundary was placed (the server's tokenize route, the "
            "reply's offsets or a context echo); null where the tokens are in hand"
        ),
    )
