"""The shape every protocol service has, so the orchestrator can run any of them."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from pydantic import BaseModel

from culturebias.application.context import RunContext
from culturebias.domain.runs import ProtocolOutcome


class BenchmarkService(Protocol):
    name: ClassVar[str]
    settings_model: ClassVar[type[BaseModel]]

    def __init__(self, settings: BaseModel) -> None: ...

    def preflight(self, ctx: RunContext) -> None:
        """Check that the configured backend has every capability the run needs.

        Runs before anything is scored; raises ``CapabilityError`` otherwise.
        """
        ...

    def run(self, ctx: RunContext, dataset: Any) -> ProtocolOutcome: ...
