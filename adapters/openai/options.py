"""``model.*`` options of the ``openai`` backend (any OpenAI-compatible server)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr

from culturebias.domain.model_options import BoundaryRule, ModelOptions


class OpenAIOptions(ModelOptions):
    backend: str = "openai"
    api_base: str | None = None  # e.g. http://127.0.0.1:8000/v1
    api_key: SecretStr | None = None  # prefer api_key_env or api_key_file: never stored
    api_key_env: str = "OPENAI_API_KEY"  # the environment variable holding the key
    api_key_file: str | None = None  # or a file holding it
    max_concurrency: int = Field(8, ge=1)  # the most requests in flight at once
    # Requests in flight at the start (at most max_concurrency): halved on a timeout, a 429 or a 503,
    # raised by one after a run of successes, up to max_concurrency (adapters/openai/concurrency.py).
    # Low because a one-slot server (llama.cpp's default) queues every extra request behind the first.
    initial_concurrency: int = Field(2, ge=1)
    adaptive_concurrency: bool = True  # False: max_concurrency in flight throughout, whatever the server says
    timeout_s: float = Field(60.0, gt=0)  # seconds a request may take (plus timeout_s_per_1k_chars)
    # Added to timeout_s per 1000 characters of the prompt (or of all chat messages): a served model reads
    # the whole prompt before answering, and 1000 characters of CJK text are 700-1000 tokens, which a
    # CPU server prefilling ~50 tokens/s needs about 20 s for.
    timeout_s_per_1k_chars: float = Field(20.0, ge=0)
    max_retries: int = Field(5, ge=0)  # timeouts, 429 and 5xx replies and invalid replies are asked again this often
    revision: str | None = None  # recorded in the model identity (servers do not report one)
    chat_template: Literal["auto", "none"] = "auto"  # none: no chat template anywhere; auto: the server's for chats
    # The served model's tokenizer files (hub id already downloaded, or a folder; no weights): chat-templated
    # text that is scored is rendered here with it (adapters/openai/templating.py), not by the server.
    tokenizer: str | None = None
    boundary_rule: BoundaryRule = "straddle-to-continuation"  # as for hf: where a token straddling the boundary counts
    # How the context/continuation boundary is placed (adapters/openai/boundaries.py): auto takes the
    # server's tokenize route where it has one, else the reply's offsets where they add up, else an
    # echo of the context alone; the truth probe decides before anything is scored.
    boundary_source: Literal["auto", "tokenize", "offsets", "context-echo"] = "auto"
    # The on-disk reply cache (<run.cache_dir>/openai/requests.sqlite): "use" reads and
    # writes, "refresh" asks every request again and replaces its entry, "off" neither.
    cache: Literal["use", "refresh", "off"] = "use"
