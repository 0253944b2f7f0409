"""Adapters under the port contract suites: name -> factory(batch_size) building the port.

Adding a backend to a contract is one entry here. Factories must build offline in
a second or two (tiny models, local doubles) and skip (``pytest.skip``) when an
optional dependency is missing.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Callable

from culturebias.adapters.scripted.backend import ScriptedGenerator, ScriptedScorer

CACHE_DIR = Path(tempfile.gettempdir()) / "culturebias-contract-cache"


def _char_logprob(char: str) -> float:
    return -((ord(char) % 7) + 1) / 10


def scripted_scorer(batch_size: int = 4) -> ScriptedScorer:
    # Depends only on the continuation's characters: additive like a real LM under the chain rule.
    return ScriptedScorer(lambda context, continuation: sum(_char_logprob(c) for c in continuation))


def scripted_generator(batch_size: int = 4) -> ScriptedGenerator:
    return ScriptedGenerator(lambda request, prompt: f"reply to {prompt[-6:]}: {len(prompt)}. done")


@functools.lru_cache(maxsize=None)
def _local_backend(backend: str, batch_size: int):
    """The ``hf`` or ``onnx`` backend over the tiny llama model."""
    import importlib

    import pytest

    pytest.importorskip("torch")
    if backend == "onnx":
        pytest.importorskip("onnxruntime")
    from culturebias.adapters.hf.testing import cached_tiny_causal_lm
    from culturebias.bootstrap.settings import ModelSettings

    create_backend = importlib.import_module(f"culturebias.adapters.{backend}.backend").create_backend
    where = {"device": "cpu"} if backend == "onnx" else {}  # hf keeps model.device=auto: a GPU where there is one
    settings = ModelSettings(backend=backend, path=str(cached_tiny_causal_lm(arch="llama")), batch_size=batch_size, **where)
    return create_backend(settings, CACHE_DIR)


def hf_scorer(batch_size: int = 4):
    return _local_backend("hf", batch_size).scorer()


def hf_generator(batch_size: int = 4):
    return _local_backend("hf", batch_size).generator()


def onnx_scorer(batch_size: int = 4):
    return _local_backend("onnx", batch_size).scorer()


def onnx_generator(batch_size: int = 4):
    return _local_backend("onnx", batch_size).generator()


@functools.lru_cache(maxsize=None)
def _openai_server():
    """One loopback OpenAI-compatible server per test process, serving the tiny llama model."""
    import atexit

    from culturebias.adapters.hf.testing import cached_tiny_causal_lm
    from culturebias.adapters.openai.test_server import HFTokenSource, OpenAITestServer

    server = OpenAITestServer("tiny-llama", HFTokenSource(str(cached_tiny_causal_lm(arch="llama"))), hf_generator(4)).start()
    atexit.register(server.stop)
    return server


@functools.lru_cache(maxsize=None)
def _openai_backend(batch_size: int):
    from culturebias.adapters.openai.backend import create_backend
    from culturebias.bootstrap.settings import ModelSettings

    server = _openai_server()
    settings = ModelSettings(backend="openai", api_base=server.api_base, path="tiny-llama", max_concurrency=batch_size)
    return create_backend(settings, Path(tempfile.mkdtemp(prefix="culturebias-contract-openai-")))


def openai_scorer(batch_size: int = 4):
    return _openai_backend(batch_size).scorer()


def openai_generator(batch_size: int = 4):
    return _openai_backend(batch_size).generator()


SCORERS: dict[str, Callable[..., object]] = {
    "scripted": scripted_scorer,
    "hf": hf_scorer,
    "onnx": onnx_scorer,
    "openai": openai_scorer,
}

GENERATORS: dict[str, Callable[..., object]] = {
    "scripted": scripted_generator,
    "hf": hf_generator,
    "onnx": onnx_generator,
    "openai": openai_generator,
}
