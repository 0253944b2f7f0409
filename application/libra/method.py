"""Which methods a LIBRA run used, named in its summary: the meaning comparison, and why bbs may not apply."""

from __future__ import annotations

from typing import TYPE_CHECKING

from culturebias.application.context import RunContext
from culturebias.domain.libra.options import LibraOptions
from culturebias.domain.libra.summary import ComparisonKind, ModelType

if TYPE_CHECKING:
    from culturebias.application.libra.service import KnowledgeBoundaryPlan  # which imports this module

MASKED_CANNOT_STATE_A_MEANING = (
    "a masked LM generates no text, so it cannot state the meaning of a local word (D1), and the LIBRA paper "
    "reports bbs for masked LMs without saying how they stated one (PROTOCOLS §4); "
    "protocol.masked_meaning=choice offers a documented recognition test instead"
)

MASKED_CHOICE_NOTE = (
    "ranking (a masked LM generates no text): the official definition against up to {k} − 1 other glossary "
    "definitions by the mean pseudo-log-likelihood of each in protocol.meaning_choice_template, f = 1 when the "
    "official one ranks first; a recognition test with chance 1/{k}, not comparable with bbs from generated definitions"
)


def comparison_kind(options: LibraOptions, ctx: RunContext) -> ComparisonKind:
    """protocol.comparison, with "auto" = the judge (the paper's P2 verification) where one is configured."""
    if options.comparison == "auto":
        return "judge" if ctx.judge_configured else "embedding"
    return options.comparison


def bbs_not_applicable(model_type: ModelType, boundary_skipped: str | None) -> str | None:
    """Why bbs is not applicable to this run, or None where the knowledge boundary was checked."""
    if boundary_skipped is None:
        return None
    if model_type == "masked" and boundary_skipped.startswith("the model cannot generate"):
        return MASKED_CANNOT_STATE_A_MEANING
    return f"the knowledge boundary was not checked: {boundary_skipped}"


def comparison_used(boundary: KnowledgeBoundaryPlan | None) -> ComparisonKind | None:
    """What compared the meanings in a planned knowledge boundary (None: not checked)."""
    if boundary is None:
        return None
    if boundary.by_choice:
        return "masked_choice"
    return "embedding" if boundary.embedder is not None else "judge"
