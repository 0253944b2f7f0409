"""``model.backend=openai``: any OpenAI-compatible server (vLLM, TGI, llama.cpp server, commercial APIs).

Configuration: ``model.api_base`` (e.g. ``http://127.0.0.1:8000/v1``), ``model.path``
(the served model's name), the key from ``model.api_key_file`` or
``$<model.api_key_env>`` (default ``OPENAI_API_KEY``), ``model.max_concurrency``,
``model.initial_concurrency``, ``model.adaptive_concurrency``, ``model.timeout_s``,
``model.timeout_s_per_1k_chars``, ``model.max_retries``. Valid replies are cached under
``<cache_dir>/openai/requests.sqlite`` (``model.cache=use|refresh|off``).

Chat templates, one rule (``templating.py``): generation from chat messages always goes to
``/v1/chat/completions`` (the server's template, applied to the same messages the local backends
render); templated text that is scored (TWBias prompt types 1-10, KoBBQ/CBBQ
``protocol.mode=likelihood`` with a template) is rendered here from ``model.tokenizer`` when given,
else through the server's template endpoint when it has one (llama.cpp ``/apply-template``, vLLM
``/tokenize`` + ``/detokenize``), else the run is refused in preflight with one CapabilityError naming
those and ``protocol.prompt_types=0`` / ``protocol.mode=generate``. The BOS a completions server adds
itself is removed from the front of rendered text. ``model.chat_template=none``: no template at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from culturebias.domain.model_options import ModelOptions, own_options
from culturebias.adapters.openai.client import ApiClient, public_base
from culturebias.adapters.openai.retry_policy import Backoff
from culturebias.adapters.openai.credentials import resolve_api_key
from culturebias.adapters.openai.generator import OpenAIGenerator
from culturebias.adapters.openai.options import OpenAIOptions
from culturebias.adapters.openai.request_cache import RequestCache
from culturebias.adapters.openai.scorer import OpenAIScorer
from culturebias.adapters.openai.templating import NoChatTemplate, ServedTemplater
from culturebias.adapters.openai.token_ids import server_root
from culturebias.domain.errors import CapabilityError, ConfigError
from culturebias.domain.identity import ModelIdentity
from culturebias.domain.redaction import redact_text
from culturebias.ports.scoring import PseudoLoglikelihoodScorer

class OpenAIBackend:
    """Built by ``create_backend``, which checks ``options`` first."""

    def __init__(self, options: OpenAIOptions, client: ApiClient, identity: ModelIdentity):
        self.options = options
        self.client = client
        self.model = options.path or ""  # the served model's name (checked non-empty by create_backend)
        self.identity = identity
        self._templater: ServedTemplater | None = None

    def scorer(self) -> OpenAIScorer:
        return OpenAIScorer(
            self.client,
            self.model,
            self.identity,
            self.options.boundary_rule,
            self.options.boundary_source,
            root=server_root(self.client),
        )

    def generator(self) -> OpenAIGenerator:
        return OpenAIGenerator(self.client, self.model, self.identity)

    def templater(self) -> ServedTemplater | NoChatTemplate:
        if self.options.chat_template == "none":
            return NoChatTemplate()
        if self._templater is None:  # kept: it probes the server once, at its first render
            self._templater = ServedTemplater(server_root(self.client), self.model, self.options.tokenizer)
        return self._templater

    def pseudo_scorer(self) -> PseudoLoglikelihoodScorer:
        raise CapabilityError(
            "openai", "pseudo-log-likelihood (masked LMs)", "OpenAI-compatible servers serve causal LMs; use model.backend=hf or onnx"
        )

    def close(self) -> None:
        self.client.close()
        if self.client.cache is not None:
            self.client.cache.close()


def create_backend(options: ModelOptions, cache_dir: Path, **client_options: Any) -> OpenAIBackend:  # Any: OpenAIClient's keyword options
    """``client_options`` (backoff, sleep, transport) are for tests."""
    options = own_options(options, OpenAIOptions)
    if not options.api_base:
        raise ConfigError("model.backend=openai needs model.api_base, e.g. --set model.api_base=http://127.0.0.1:8000/v1")
    if not options.path:
        raise ConfigError("model.backend=openai needs model.path: the model name the server serves (the requests' 'model' field)")
    if options.kind != "causal":
        raise ConfigError("model.backend=openai serves causal LMs only; model.kind=masked needs model.backend=hf or onnx")
    key = resolve_api_key(options.api_key, options.api_key_file, options.api_key_env)
    cache = RequestCache(Path(cache_dir) / "openai" / "requests.sqlite") if options.cache != "off" else None
    client = ApiClient(
        options.api_base,
        api_key=key,
        timeout_s=options.timeout_s,
        timeout_s_per_1k_chars=options.timeout_s_per_1k_chars,
        max_retries=options.max_retries,
        max_concurrency=options.max_concurrency,
        initial_concurrency=options.initial_concurrency,
        adaptive_concurrency=options.adaptive_concurrency,
        cache=cache,
        cache_mode=options.cache,
        backoff=client_options.pop("backoff", None) or Backoff(),
        **client_options,
    )
    identity = ModelIdentity(
        backend="openai",
        model=options.path,
        revision=options.revision,
        dtype="remote",
        kind="api",
        description=redact_text(f"served by {public_base(options.api_base)}"),
    )
    return OpenAIBackend(options, client, identity)
