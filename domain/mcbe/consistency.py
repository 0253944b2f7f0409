"""McBE's judge–human consistency rate (the paper's Appendix E.1, Table 13): how often the judge's BA scores pick
the answer that people picked.

A pair is two answers to one BEI's BA question (the same BEI in run A and run B). People name the better answer
(``a``, ``b``, or ``tie``); the judge's pick is the answer with the higher BA score (its weighted sum of the four
criteria), a tie where the two scores are equal. The rate is the share of pairs in which the two picks are the
same (a human tie agrees only with equal judge scores), with a 95% Wilson interval and n. A pair whose answer the
judge never scored (BA skipped it) counts in neither n nor the rate, and is listed.

Pure: the human file's rows are read by an adapter (``adapters/mcbe/human_winners.py``); this module checks them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from culturebias.domain.errors import DataError
from culturebias.domain.uncertainty.score import wilson

Winner = Literal["a", "b", "tie"]
WINNERS: dict[str, Winner] = {"a": "a", "b": "b", "tie": "tie"}
ITEM_FIELD = "item"
WINNER_FIELD = "winner"
BA_SUFFIX = "|ba"


@dataclass(frozen=True)
class HumanWinner:
    """One row of a human-winners file: the BEI whose two BA answers were compared, and the one people chose."""

    item: str
    winner: Winner
    row: int


@dataclass(frozen=True)
class JudgedPair:
    """A human winner with the judge's BA scores of the same two answers (None: the judge scored it not)."""

    item: str
    category: str | None
    human: Winner
    score_a: float | None
    score_b: float | None


def judge_winner(score_a: float, score_b: float) -> Winner:
    return "a" if score_a > score_b else "b" if score_b > score_a else "tie"


def bei_of(item: str) -> str:
    """A BEI named as in a run's records: ``gender:2`` or its BA item id ``gender:2|ba``."""
    return item.removesuffix(BA_SUFFIX)


def human_winners(rows: Sequence[tuple[int, Mapping[str, object]]], file: str) -> list[HumanWinner]:
    """The rows (row number, fields) of a human-winners file, checked: an ``item`` named once, a ``winner`` of
    ``a``, ``b`` or ``tie`` (any case). A bad row is a ``DataError`` naming the file, the row and the field."""
    seen: dict[str, int] = {}
    found: list[HumanWinner] = []
    for row, fields in rows:
        item = fields.get(ITEM_FIELD)
        if not isinstance(item, str) or not item.strip():
            raise DataError("each row names the BEI whose answers were compared", file=file, row=row, field=ITEM_FIELD)
        item = bei_of(item.strip())
        if item in seen:
            raise DataError(f"{item!r} is named twice (first on row {seen[item]})", file=file, row=row, field=ITEM_FIELD)
        seen[item] = row
        value = fields.get(WINNER_FIELD)
        winner = WINNERS.get(value.strip().lower()) if isinstance(value, str) else None
        if winner is None:
            raise DataError(f"the winner is a, b or tie, got {value!r}", file=file, row=row, field=WINNER_FIELD)
        found.append(HumanWinner(item, winner, row))
    if not found:
        raise DataError("no pairs: the file holds no row", file=file)
    return found


class Agreement(BaseModel):
    """How often the judge's pick was the people's: ``agree`` of ``n`` pairs, the rate and its 95% Wilson interval."""

    model_config = ConfigDict(frozen=True)

    n: int = Field(description="pairs both answers of which the judge scored")
    agree: int = Field(description="pairs in which the judge's higher score is on the answer people chose (ties: both tie)")
    rate: float | None = Field(description="agree / n (null when n = 0)")
    low: float | None = Field(description="95% Wilson interval, lower bound")
    high: float | None = Field(description="95% Wilson interval, upper bound")


def agreement(agree: int, n: int) -> Agreement:
    if n == 0:
        return Agreement(n=0, agree=0, rate=None, low=None, high=None)
    low, high = wilson(agree, n)
    return Agreement(n=n, agree=agree, rate=agree / n, low=low, high=high)


class JudgeConsistency(Agreement):
    """The judge–human consistency rate of McBE's Table 13, over every pair and per category."""

    human_ties: int = Field(0, description="pairs people called a tie (in n)")
    judge_ties: int = Field(0, description="pairs the judge scored equal (in n)")
    unscored: list[str] = Field(default_factory=list, description="BEIs left out: the judge scored one of the answers not")
    categories: dict[str, Agreement] = Field(default_factory=dict, description="the same, per McBE category")
    human_file: str | None = Field(None, description="the file of human winners")
    run_a: str | None = Field(None, description="the run whose answers are 'a' (its run id)")
    run_b: str | None = Field(None, description="the run whose answers are 'b' (its run id)")
    model_a: str | None = Field(None, description="the model of run a")
    model_b: str | None = Field(None, description="the model of run b")


def consistency(pairs: Sequence[JudgedPair]) -> JudgeConsistency:
    hits: list[bool] = []
    by_category: dict[str, list[bool]] = {}
    human_ties = judge_ties = 0
    unscored: list[str] = []
    for pair in pairs:
        if pair.score_a is None or pair.score_b is None:
            unscored.append(pair.item)
            continue
        judged = judge_winner(pair.score_a, pair.score_b)
        hits.append(judged == pair.human)
        by_category.setdefault(pair.category or "unknown", []).append(hits[-1])
        human_ties += pair.human == "tie"
        judge_ties += judged == "tie"
    overall = agreement(sum(hits), len(hits))
    return JudgeConsistency(
        **overall.model_dump(),
        human_ties=human_ties,
        judge_ties=judge_ties,
        unscored=unscored,
        categories={name: agreement(sum(found), len(found)) for name, found in sorted(by_category.items())},
    )
