"""Who produced a score: model identity and the numeric provenance of every score."""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict


class ModelIdentity(BaseModel):
    """Everything a cached score depends on besides the request text itself.

    The request text already contains the rendered chat template, so a template
    change changes the key; ``tokenizer`` is a fingerprint of the tokenizer files;
    ``weights`` one of the weight files of a model loaded from this machine (sizes
    and hashes), so a folder whose weights were replaced is another model.
    """

    model_config = ConfigDict(frozen=True)

    backend: str
    model: str
    revision: str | None = None
    tokenizer: str | None = None
    dtype: str = "float32"
    kind: Literal["causal", "masked", "api", "scripted", "replay"] = "causal"
    parameters: int | None = None
    description: str = ""
    weights: str | None = None

    def cache_key(self) -> str:
        stable = {k: v for k, v in self.model_dump().items() if k not in {"description", "parameters"}}
        if stable["weights"] is None:
            del stable["weights"]  # keys of models without a weights fingerprint stay as they were
        return hashlib.sha256(json.dumps(stable, sort_keys=True).encode()).hexdigest()[:16]


class ScoreProvenance(BaseModel):
    """Numeric settings a score depends on; stored next to every score."""

    model_config = ConfigDict(frozen=True)

    backend: str
    dtype: str
    device: str = "cpu"
    batch_size: int = 1
    padding_side: str = "right"
    boundary_rule: str = "straddle-to-continuation"
    # How a served model's context/continuation boundary was placed (the openai backend's
    # model.boundary_source: the server's tokenize route, the reply's offsets, or a context echo);
    # None where the tokens are in hand.
    boundary_source: str | None = None
