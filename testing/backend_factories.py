"""Adapters under the port contract suites, keyed by registered backend name.

``BACKENDS[name]`` gives, for the backend registered as ``name``, a factory
``factory(batch_size)`` for each port its capabilities promise (``loglikelihood``
→ scorer, ``generate`` → generator, ``pseudo_loglikelihood`` → pseudo-scorer);
``test_registered_backends.py`` fails for a registered backend without them.
``DOUBLES`` are test doubles that no configuration selects, held to the same
contracts. Factories must build offline in a second or two (tiny models, local
doubles) and skip (``pytest.skip``) when an optional dependency is missing.
"""

from __future__ import annotations

import functools
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from culturebias.testing.scripted import ScriptedGenerator, ScriptedPseudoScorer, ScriptedScorer
from culturebias.domain.requests import RequestKey

CACHE_DIR = Path(tempfile.gettempdir()) / "culturebias-contract-cache"

Factory = Callable[..., Any]  # Any: a factory of one port kind (scorer, generator or pseudo-scorer), its table says which


@dataclass(frozen=True)
class PortFactories:
    scorer: Factory | None = None  # capability "loglikelihood"
    generator: Factory | None = None  # capability "generate"
    pseudo_scorer: Factory | None = None  # capability "pseudo_loglikelihood"


# The port each capability's contract suite tests; "chat_template" has no suite of its own.
CAPABILITY_PORTS = {"loglikelihood": "scorer", "generate": "generator", "pseudo_loglikelihood": "pseudo_scorer"}

# Generation requests of the contract carry ``contract_key(n)`` for n below this, so a
# backend that answers by request key (replay) can answer them.
CONTRACT_KEYS = 16


def contract_key(n: int) -> str:
    return RequestKey.of({"contract_request": n}).encode()


# --------------------------------------------------------------------------- scripted doubles


def _char_logprob(char: str) -> float:
    return -((ord(char) % 7) + 1) / 10


def scripted_scorer(batch_size: int = 4) -> ScriptedScorer:
    # Depends only on the continuation's characters: additive like a real LM under the chain rule.
    return ScriptedScorer(lambda context, continuation: sum(_char_logprob(c) for c in continuation))


def scripted_generator(batch_size: int = 4) -> ScriptedGenerator:
    return ScriptedGenerator(lambda request, prompt: f"reply to {prompt[-6:]}: {len(prompt)}. done")


def scripted_pseudo_scorer(batch_size: int = 2) -> ScriptedPseudoScorer:
    # Additive over characters, like a PLL is over tokens; depends on the text so contexts matter.
    return ScriptedPseudoScorer(lambda text, start, end: -(0.5 + 0.001 * len(text)) * (end - start))


# --------------------------------------------------------------------------- hf and onnx


@functools.lru_cache(maxsize=None)
def _local_backend(backend: str, kind: str, batch_size: int):
    """The ``hf`` or ``onnx`` backend over the tiny llama model (causal) or the tiny BERT (masked)."""
    import importlib

    import pytest

    pytest.importorskip("torch")
    if backend == "onnx":
        pytest.importorskip("onnxruntime")
    from culturebias.bootstrap.registry import registry
    from culturebias.testing.tiny_models import cached_tiny_causal_lm, cached_tiny_masked_lm

    create_backend = importlib.import_module(f"culturebias.adapters.{backend}.backend").create_backend
    options_model = registry().backend(backend).options_model()
    if kind == "masked":
        options = options_model(backend=backend, path=str(cached_tiny_masked_lm()), kind="masked", device="cpu", batch_size=batch_size)
    else:
        where = {"device": "cpu"} if backend == "onnx" else {}  # hf keeps model.device=auto: a GPU where there is one
        options = options_model(backend=backend, path=str(cached_tiny_causal_lm(arch="llama")), batch_size=batch_size, **where)
    return create_backend(options, CACHE_DIR)


def hf_scorer(batch_size: int = 4):
    return _local_backend("hf", "causal", batch_size).scorer()


def hf_generator(batch_size: int = 4):
    return _local_backend("hf", "causal", batch_size).generator()


def hf_pseudo_scorer(batch_size: int = 2):
    return _local_backend("hf", "masked", batch_size).pseudo_scorer()


def onnx_scorer(batch_size: int = 4):
    return _local_backend("onnx", "causal", batch_size).scorer()


def onnx_generator(batch_size: int = 4):
    return _local_backend("onnx", "causal", batch_size).generator()


def onnx_pseudo_scorer(batch_size: int = 2):
    return _local_backend("onnx", "masked", batch_size).pseudo_scorer()


# --------------------------------------------------------------------------- openai


@functools.lru_cache(maxsize=None)
def _openai_server():
    """One loopback OpenAI-compatible server per test process, serving the tiny llama model."""
    import atexit

    from culturebias.testing.openai_server import HFTokenSource, OpenAITestServer
    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    server = OpenAITestServer("tiny-llama", HFTokenSource(str(cached_tiny_causal_lm(arch="llama"))), hf_generator(4)).start()
    atexit.register(server.stop)
    return server


@functools.lru_cache(maxsize=None)
def _openai_backend(batch_size: int):
    from culturebias.adapters.openai.backend import create_backend
    from culturebias.adapters.openai.options import OpenAIOptions

    server = _openai_server()
    options = OpenAIOptions(backend="openai", api_base=server.api_base, path="tiny-llama", max_concurrency=batch_size)
    return create_backend(options, Path(tempfile.mkdtemp(prefix="culturebias-contract-openai-")))


def openai_scorer(batch_size: int = 4):
    return _openai_backend(batch_size).scorer()


def openai_generator(batch_size: int = 4):
    return _openai_backend(batch_size).generator()


# --------------------------------------------------------------------------- replay


@functools.lru_cache(maxsize=None)
def _replay_file() -> Path:
    """Answers to every contract key, written the way a replay file from elsewhere is."""
    path = Path(tempfile.mkdtemp(prefix="culturebias-contract-replay-")) / "answers.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for n in range(CONTRACT_KEYS):
            record = {"contract_request": n, "raw": f"reply {n}: the answer is {7 * n}. done"}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def replay_generator(batch_size: int = 4):
    from culturebias.adapters.replay.backend import ReplayOptions, create_backend

    return create_backend(ReplayOptions(backend="replay", path=str(_replay_file())), CACHE_DIR).generator()


# --------------------------------------------------------------------------- the tables

BACKENDS: dict[str, PortFactories] = {
    "hf": PortFactories(scorer=hf_scorer, generator=hf_generator, pseudo_scorer=hf_pseudo_scorer),
    "onnx": PortFactories(scorer=onnx_scorer, generator=onnx_generator, pseudo_scorer=onnx_pseudo_scorer),
    "openai": PortFactories(scorer=openai_scorer, generator=openai_generator),
    "replay": PortFactories(generator=replay_generator),
}

DOUBLES: dict[str, PortFactories] = {
    "scripted": PortFactories(scorer=scripted_scorer, generator=scripted_generator, pseudo_scorer=scripted_pseudo_scorer),
}


def _port(port: str) -> dict[str, Factory]:
    return {name: getattr(ports, port) for name, ports in {**BACKENDS, **DOUBLES}.items() if getattr(ports, port) is not None}


SCORERS: dict[str, Factory] = _port("scorer")
GENERATORS: dict[str, Factory] = _port("generator")
PSEUDO_SCORERS: dict[str, Factory] = _port("pseudo_scorer")
