"""The described-port contract suite (culturebias.testing.contracts.described) over every registered backend's ports,
and what a plan and a run read from each registered backend itself (``check_backend``)."""

from __future__ import annotations

import pytest

from culturebias.bootstrap.registry import registry
from culturebias.ports.model_backend import Configured, PlanTemplating, Tokenizing
from culturebias.testing import backend_factories
from culturebias.testing.contracts.described import *  # noqa: F401,F403  (the suite's fixtures and tests)
from culturebias.testing.contracts.described import check_backend

# The backend each registered name builds, as its contract factories build it (no model loads: ports build lazily).
BUILDERS = {
    "hf": lambda: backend_factories._local_backend("hf", "causal", 4),
    "onnx": lambda: backend_factories._local_backend("onnx", "causal", 4),
    "openai": lambda: backend_factories._openai_backend(4),
    "replay": lambda: registry().backend("replay").create()(
        registry().backend("replay").options_model()(backend="replay", path=str(backend_factories._replay_file())),
        backend_factories.CACHE_DIR,
    ),
}
# Backends whose plan counts exact tokens and renders chats without loading the model (a local tokenizer).
LOCAL = {"hf", "onnx"}


@pytest.mark.parametrize("name", registry().backends.names())
def test_every_registered_backend_gives_what_a_plan_and_a_run_read(name):
    assert name in BUILDERS, f"backend {name!r} is registered: add how to build it to BUILDERS"
    backend = BUILDERS[name]()
    check_backend(backend, name)
    local = isinstance(backend, Tokenizing) and isinstance(backend, PlanTemplating) and isinstance(backend, Configured)
    assert local == (name in LOCAL), f"{name}: a local backend declares its tokenizer, plan templater and options"
