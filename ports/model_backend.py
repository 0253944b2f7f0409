"""A model backend (``model.backend``): the model ports it builds, each refused with ``CapabilityError`` when it has none.

The registry's backend factory returns one (``bootstrap.registry.BackendFactory``); the
container builds the run's ports from it, lazily. The descriptor's ``capabilities``
say ahead of time which of these a backend offers.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from culturebias.domain.model_options import ModelOptions

from culturebias.ports.generation import Generator
from culturebias.ports.scoring import LoglikelihoodScorer, PseudoLoglikelihoodScorer
from culturebias.ports.templating import ChatTemplater


@runtime_checkable
class ModelBackend(Protocol):
    def scorer(self) -> LoglikelihoodScorer:
        """Continuation log-likelihoods (capability ``loglikelihood``)."""
        ...

    def generator(self) -> Generator:
        """Text generation (capability ``generate``)."""
        ...

    def templater(self) -> ChatTemplater:
        """The model's chat template (capability ``chat_template``)."""
        ...

    def pseudo_scorer(self) -> PseudoLoglikelihoodScorer:
        """Pseudo-log-likelihoods of a masked LM (capability ``pseudo_loglikelihood``)."""
        ...


@runtime_checkable
class Tokenizing(Protocol):
    """A backend that has the evaluated model's tokenizer (a local model): a plan counts tokens with it."""

    def tokenizer(self) -> Any:  # Any: a transformers tokenizer (text -> {"input_ids": [...]}), None where it has none
        ...


@runtime_checkable
class PlanTemplating(Protocol):
    """A backend whose chat template renders without loading the model (on its tokenizer alone): a plan renders chats with it."""

    def plan_templater(self) -> ChatTemplater: ...


@runtime_checkable
class Configured(Protocol):
    """A backend that says the options it runs with (a local one settles ``model.batch_size=auto`` when its model loads)."""

    @property
    def options(self) -> ModelOptions: ...
