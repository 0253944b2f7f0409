"""A model backend (``model.backend``): the model ports it builds, each refused with ``CapabilityError`` when it has none.

The registry's backend factory returns one (``bootstrap.registry.BackendFactory``); the
container builds the run's ports from it, lazily. The descriptor's ``capabilities``
say ahead of time which of these a backend offers.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

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
