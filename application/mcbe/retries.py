"""Ask the model for numbers, skipping the retry rounds when its first replies hold none (``judge_stop``).

The first round is asked for every question; when more than X of the first K
replies hold no number, nobody is asked again. Otherwise the unparseable ones are
asked again exactly as ``ask_for_numbers`` would have (the previous reply and the
reminder appended), so a model that answers gets the same replies as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from culturebias.domain.mcbe.judge_stop import JudgeStopRule
from culturebias.domain.replies import Conversation, NumberQuestion, NumberReply, ask_for_numbers, retry_conversation


@dataclass(frozen=True)
class StoppableReplies:
    replies: list[NumberReply]
    stopped: bool
    unparseable: int  # replies of the first round's probe without a number
    not_retried: int  # unparseable first replies that were not asked again because of the stop


def ask_with_stop(
    questions: Sequence[NumberQuestion],
    ask: Callable[[list[Conversation]], list[str]],
    max_retries: int,
    rule: JudgeStopRule,
) -> StoppableReplies:
    if not rule.active or max_retries == 0:
        return StoppableReplies(ask_for_numbers(questions, ask, max_retries), False, 0, 0)
    first = ask_for_numbers(questions, ask, 0)
    missing = [r.value is None for r in first]
    pending = [i for i, none in enumerate(missing) if none]
    probe = sum(missing[: rule.probe])
    if rule.stops(missing):
        return StoppableReplies(first, True, probe, len(pending))
    if not pending:
        return StoppableReplies(first, False, probe, 0)
    again = [
        NumberQuestion(retry_conversation(questions[i], [first[i].raw]), questions[i].low, questions[i].high, questions[i].reminder)
        for i in pending
    ]
    later = ask_for_numbers(again, ask, max_retries - 1)
    replies = list(first)
    for i, reply in zip(pending, later):
        replies[i] = replace(reply, attempts=reply.attempts + 1)
    return StoppableReplies(replies, False, probe, 0)
