"""What McBE's preflight decided: the tasks to run and, when BA runs, its judge."""

from __future__ import annotations

from dataclasses import dataclass

from culturebias.domain.mcbe.summary import JudgeFacts


@dataclass(frozen=True)
class McBEPlan:
    tasks: tuple[str, ...]  # in protocol order
    judge: JudgeFacts | None  # the BA judge; None when BA does not run
