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
def _hf_backend(batch_size: int):
    import pytest

    pytest.importorskip("torch")
    from culturebias.adapters.hf.backend import create_backend
    from culturebias.adapters.hf.testing import cached_tiny_causal_lm
    from culturebias.bootstrap.settings import ModelSettings

    settings = ModelSettings(path=str(cached_tiny_causal_lm(arch="llama")), batch_size=batch_size)
    return create_backend(settings, CACHE_DIR)


def hf_scorer(batch_size: int = 4):
    return _hf_backend(batch_size).scorer()


def hf_generator(batch_size: int = 4):
    return _hf_backend(batch_size).generator()


SCORERS: dict[str, Callable[..., object]] = {
    "scripted": scripted_scorer,
    "hf": hf_scorer,
}

GENERATORS: dict[str, Callable[..., object]] = {
    "scripted": scripted_generator,
    "hf": hf_generator,
}
