"""Scorers: batched continuation log-likelihood (causal LMs) and pseudo-log-likelihood (masked LMs)."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from culturebias.domain.identity import ModelIdentity, ScoreProvenance
from culturebias.domain.requests import (
    LoglikelihoodRequest,
    LoglikelihoodResult,
    PseudoLoglikelihoodRequest,
    PseudoLoglikelihoodResult,
)
from culturebias.ports.progress import ProgressTask


@runtime_checkable
class LoglikelihoodScorer(Protocol):
    """PROTOCOLS §0.1. Results come back in request order.

    Implementations batch internally; callers hand over every request they have.
    An adapter that cannot return prompt log-probabilities raises
    ``CapabilityError`` from ``check_loglikelihood()``, which the application
    calls before a run starts, and again before it compares stored scores'
    provenance with the port's (a remote scorer's probe settles its provenance):
    a second call costs nothing.
    """

    @property
    def identity(self) -> ModelIdentity: ...

    @property
    def provenance(self) -> ScoreProvenance: ...

    def check_loglikelihood(self) -> None: ...

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], progress: ProgressTask | None = None
    ) -> list[LoglikelihoodResult]: ...


@runtime_checkable
class PseudoLoglikelihoodScorer(Protocol):
    """PROTOCOLS §0.2, for masked LMs."""

    @property
    def identity(self) -> ModelIdentity: ...

    @property
    def provenance(self) -> ScoreProvenance: ...

    def pseudo_loglikelihood(
        self, requests: Sequence[PseudoLoglikelihoodRequest], progress: ProgressTask | None = None
    ) -> list[PseudoLoglikelihoodResult]: ...
