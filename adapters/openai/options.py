"""``model.*`` options of the ``openai`` backend (any OpenAI-compatible server)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr

from culturebias.adapters.model_options import BoundaryRule, ModelOptions


class OpenAIOptions(ModelOptions):
    backend: str = "openai"
    api_base: str | None = None  # e.g. http://127.0.0.1:8000/v1
    api_key: SecretStr | None = None  # prefer api_key_env or api_key_file: never stored
    api_key_env: str = "OPENAI_API_KEY"
    api_key_file: str | None = None
    max_concurrency: int = Field(8, ge=1)
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(5, ge=0)
    revision: str | None = None  # recorded in the model identity (servers do not report one)
    chat_template: Literal["auto", "none"] = "auto"
    boundary_rule: BoundaryRule = "straddle-to-continuation"
    # How the context/continuation boundary is placed (adapters/openai/boundaries.py): auto takes the
    # server's tokenize route where it has one, else the reply's offsets where they add up, else an
    # echo of the context alone; the truth probe decides before anything is scored.
    boundary_source: Literal["auto", "tokenize", "offsets", "context-echo"] = "auto"
    # The on-disk reply cache (<run.cache_dir>/openai/requests.sqlite): "use" reads and
    # writes, "refresh" asks every request again and replaces its entry, "off" neither.
    cache: Literal["use", "refresh", "off"] = "use"
