"""Send judge requests under McBE's stopping rule (``domain/mcbe/judge_stop.py``).

The first K requests go to the judge as one batch (the judge retries them as it
always does). When the rule says the judge cannot answer, the rest are not sent;
otherwise they follow as one more batch, so a working judge returns exactly the
verdicts it would have returned in one call (greedy replies do not depend on batching).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from culturebias.domain.mcbe.judge_stop import JudgeStopRule
from culturebias.ports.judging import Judge, JudgeRequest, JudgeVerdict


@dataclass(frozen=True)
class GuardedVerdicts:
    verdicts: list[JudgeVerdict | None]  # one per request; None: not sent (the judge was stopped)
    stopped: bool
    unparseable: int  # unparseable verdicts among the first K (all of them when the rule is off)


def judge_guarded(judge: Judge, requests: Sequence[JudgeRequest], rule: JudgeStopRule) -> GuardedVerdicts:
    if not requests:
        return GuardedVerdicts([], False, 0)
    if not rule.active or len(requests) <= rule.probe:
        verdicts = list(judge.judge(list(requests)))
        probe = verdicts[: rule.probe] if rule.active else verdicts
        unparseable = [v.value is None for v in probe]
        return GuardedVerdicts(list(verdicts), rule.stops(unparseable), sum(unparseable))
    first = list(judge.judge(list(requests[: rule.probe])))
    unparseable = [v.value is None for v in first]
    if rule.stops(unparseable):
        return GuardedVerdicts([*first, *([None] * (len(requests) - rule.probe))], True, sum(unparseable))
    rest = list(judge.judge(list(requests[rule.probe :])))
    return GuardedVerdicts([*first, *rest], False, sum(unparseable))
