"""When to stop asking for numbers that never come (PROTOCOLS §3, "retry a bounded number of times").

A judge that never replies with a number (a 135M model judging itself, say) makes
every verdict exhaust every retry round: the default run once took 70 minutes that
way. The rule: the first ``probe`` (K) replies decide; when more than
``max_unparseable`` (X, a share) of them hold no number, asking again is pointless.

- BA (the judge's verdicts, each after the judge's own retries): the judge is declared
  unusable, the remaining requests are not sent, and BA has no score. The loss is
  counted and stated, never turned into 0.
- BS (the evaluated model's severity ratings, first attempts): the retry rounds are
  skipped. An unparseable rating still counts as the worst error (PROTOCOLS §3), so BS
  keeps its score; the stop is stated.
"""

from __future__ import annotations

from pydantic import Field

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from culturebias.domain.summary import Block, Count, Number


@dataclass(frozen=True, slots=True)
class JudgeStopRule:
    probe: int  # K: the first K replies decide; 0 never stops
    max_unparseable: float  # X: stop when the unparseable share of the probe is above this

    def __post_init__(self) -> None:
        if self.probe < 0:
            raise ValueError("the probe must be >= 0")
        if not 0.0 <= self.max_unparseable <= 1.0:
            raise ValueError("the unparseable share must be within [0, 1]")

    @property
    def active(self) -> bool:
        return self.probe > 0 and self.max_unparseable < 1.0

    def stops(self, unparseable: Sequence[bool]) -> bool:
        """True when the first K replies (True = no number) exceed the allowed share.

        Fewer than K replies never stop: with so few requests there is no time to save,
        and the sample would be too small to call the replier unusable.
        """
        if not self.active or len(unparseable) < self.probe:
            return False
        probe = list(unparseable)[: self.probe]
        return sum(probe) / len(probe) > self.max_unparseable


class ReplyStop(Block):
    """One task whose number replies were stopped by the rule: why, and what it cost."""

    task: str = Field(description='"ba" (the judge) or "bs" (the model\'s ratings)')
    replier: Literal["judge", "model"] = Field(description="who gave no number: the judge or the model")
    effect: Literal["no_score", "no_retries"] = Field(
        description="no_score (BA loses its score) or no_retries (BS keeps its ratings, without retries)",
    )
    probe: Count = Field(description="K: the first K replies that decided")
    max_unparseable: Number = Field(description="X, as a share (0.5 = 50%): above it the replier is stopped")
    unparseable: Count = Field(description="replies of the probe without a number")
    max_retries: Count | None = Field(
        None,
        description="the retries each reply had (judge.max_retries / protocol.max_retries)",
    )
    not_sent: Count = Field(description="requests never sent (BA: judge requests; BS: retries skipped)")
    unscored: Count = Field(description="BEIs left without a score in this task (BS: 0)")
    reason: str = Field(description="the rule and what it found, in words")

    @classmethod
    def fired(
        cls, task: Literal["ba", "bs"], rule: JudgeStopRule, asked: tuple[int, int | None, int, int], retries: str, cost: str
    ) -> "ReplyStop":
        """``task``'s stop (BA: the judge's, no score; BS: the model's, no retries); ``asked`` is
        (unparseable, max_retries, not_sent, unscored), ``retries`` how the replies were retried, ``cost`` what stopping cost."""
        unparseable, max_retries, not_sent, unscored = asked
        judged = task == "ba"
        return cls(
            task=task, replier="judge" if judged else "model", effect="no_score" if judged else "no_retries",
            probe=rule.probe, max_unparseable=rule.max_unparseable, unparseable=unparseable, max_retries=max_retries,
            not_sent=not_sent, unscored=unscored, reason=f"{stop_reason(task, rule, unparseable, retries)}: {cost}",
        )  # fmt: skip


def stop_reason(task: str, rule: JudgeStopRule, unparseable: int, retries: str) -> str:
    who = "the judge" if task == "ba" else "the model"
    share = 100 * unparseable / rule.probe if rule.probe else 0.0
    return (
        f"{who} gave no number in {unparseable} of its first {rule.probe} {task.upper()} replies {retries} "
        f"({share:.0f}% > protocol.judge_max_unparseable={100 * rule.max_unparseable:g}%)"
    )
