"""The shape every protocol service has, so the orchestrator can run any of them.

A service is stateless: ``preflight`` checks the backend's capabilities and
returns a frozen plan (the answering mode, whether a chat template is used,
...); ``run`` receives that plan with the loaded dataset and returns the
benchmark's typed ``ProtocolOutcome``. Nothing is stored on the service
between the two calls, so one service object can run many evaluations: what
the run drew (``protocol.sample``) and the limit it ran under come back in the
outcome (``ProtocolOutcome.drawn_sample``, ``.limit``).
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, TypeVar, runtime_checkable

from pydantic import BaseModel

from culturebias.application.context import RunContext
from culturebias.domain.summary import ProtocolOutcome

OptionsT = TypeVar("OptionsT", bound=BaseModel)
DatasetT = TypeVar("DatasetT", contravariant=True)
PlanT = TypeVar("PlanT")


class BenchmarkService(Protocol[DatasetT, PlanT]):
    def __init__(self, options: Any) -> None: ...  # Any: each service takes its own options model

    def preflight(self, ctx: RunContext) -> PlanT:
        """Check that the configured backend has every capability the run needs; return the frozen plan.

        Runs before anything is scored; raises ``CapabilityError`` otherwise.
        """
        ...

    def run(self, ctx: RunContext, dataset: DatasetT, plan: PlanT) -> ProtocolOutcome[Any, Any, Any]: ...  # Any: its own metrics, counts, details


@runtime_checkable
class CombinesRepeats(Protocol):
    """A service whose protocol reports every score over ``run.repeats`` (McBE): it combines the repeats'
    outcomes into the first's metrics."""

    def combine_repeats(self, outcomes: Sequence[Any]) -> ProtocolOutcome[Any, Any, Any]: ...  # Any: its own outcome type
