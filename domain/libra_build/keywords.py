"""Seed keywords per social group and their expansions (PROTOCOLS §4 construction step 2)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

KeywordSource = Literal["seed", "embedding", "association", "cluster"]


class SeedGroup(BaseModel):
    """One social group as the user's seed file names it."""

    model_config = ConfigDict(frozen=True)

    group: str = Field(min_length=1)
    category: str | None = None
    keywords: tuple[str, ...] = Field(min_length=1)
    # The group whose terms make S_p (the seeds file's "counterpart", or the one the build pairs it with).
    counterpart: str | None = None


class ExpandedKeyword(BaseModel):
    """A keyword of a group and why it is one: a seed, or found from the corpus with a score.

    ``score``: 1.0 for a seed; cosine similarity for ``embedding``; the rule's
    confidence for ``association``; the cluster's share of the group for ``cluster``.
    ``evidence`` says what it was found from (the seed it is near, the rule's
    antecedent, the cluster id), for the build report and the review sheet.
    """

    model_config = ConfigDict(frozen=True)

    group: str
    keyword: str
    source: KeywordSource
    score: float
    evidence: str = ""
