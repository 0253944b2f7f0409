"""BA, bias analysis: the model analyses the default sentence, a judge scores four criteria (PROTOCOLS §3)."""

from __future__ import annotations

from culturebias.application.context import RunContext
from culturebias.application.mcbe.judging import judge_guarded
from culturebias.application.mcbe.outcome import TaskOutcome, params
from culturebias.domain.mcbe.instances import BEI
from culturebias.domain.mcbe.judge_stop import ReplyStop
from culturebias.domain.mcbe.metrics import ba_weighted_sum
from culturebias.domain.mcbe.options import McBEOptions
from culturebias.domain.mcbe.replies import REMINDER
from culturebias.domain.mcbe.summary import BAItem, PerCriterion
from culturebias.domain.mcbe.taxonomy import BA_CRITERIA
from culturebias.domain.replies import parse_number
from culturebias.domain.requests import GenerationRequest
from culturebias.domain.summary import Number
from culturebias.ports.judging import JudgeRequest, JudgeVerdict, RetryingJudge


def bias_analysis(ctx: RunContext, beis: list[BEI], options: McBEOptions) -> TaskOutcome:
    outcome = TaskOutcome("ba")
    generation = params(options.ba_max_new_tokens, ctx)
    requests = [GenerationRequest.chat(options.prompts.analysis(bei), generation) for bei in beis]
    replies = ctx.generator().generate(requests, description="McBE BA: analyses") if requests else []
    analyses = [r.text for r in replies]
    # An analysis that never came (no valid reply after the backend's retries) is not judged.
    judged = {index: k for k, index in enumerate(i for i, r in enumerate(replies) if not r.invalid)}
    judge_requests = [
        JudgeRequest(options.prompts.judge(analyses[index], beis[index].explanation, criterion), 0, criterion.high, REMINDER)
        for index in judged
        for criterion in BA_CRITERIA
    ]
    guarded = judge_guarded(ctx.judge(), judge_requests, options.judge_stop_rule)
    verdicts = guarded.verdicts
    outcome.counts["ba_judge_requests"] = len(judge_requests)
    if guarded.stopped:
        outcome.counts["ba_judge_not_sent"] = sum(v is None for v in verdicts)
    for index, (bei, analysis) in enumerate(zip(beis, analyses)):
        if index not in judged:
            outcome.count("ba_invalid_replies", category=bei.category)
            outcome.items[bei.item_id] = _item("", [NOT_SENT] * len(BA_CRITERIA), score=None)
            continue
        slot = judged[index]
        sent = verdicts[slot * len(BA_CRITERIA) : (slot + 1) * len(BA_CRITERIA)]
        mine = [v if v is not None else NOT_SENT for v in sent]
        if guarded.stopped:  # the judge cannot answer: no BA score for any BEI, not even the probe's
            outcome.count("ba_judge_stopped", category=bei.category)
            missing = sum(1 for v in sent if v is not None and v.value is None)
            retried = sum(1 for v in sent if v is not None and v.attempts > 1)
            if retried:
                outcome.count("ba_judge_retried", retried)
            if missing:
                outcome.count("ba_judge_invalid", missing, category=bei.category)
            outcome.items[bei.item_id] = _item(analysis, mine, score=None)
            continue
        values: dict[str, float | None] = {}
        for criterion, verdict in zip(BA_CRITERIA, mine):
            values[criterion.key] = verdict.value
            if verdict.attempts > 1:
                outcome.count("ba_judge_retried")
            if verdict.value is None:
                outcome.count("ba_judge_invalid", category=bei.category)
            elif parse_number(verdict.raw, 0, criterion.high)[1]:
                outcome.count("ba_judge_clamped", category=bei.category)
        invalid = [k for k, v in values.items() if v is None]
        score: float | None
        if invalid and options.ba_invalid == "skip":
            outcome.count("ba_skipped_invalid", category=bei.category)
            score = None
        else:
            # an unscored criterion counts 0, the worst mark, as BS counts an unparseable rating
            score = ba_weighted_sum({k: (v if v is not None else 0.0) for k, v in values.items()})
            outcome.add_score(bei, score)
        outcome.items[bei.item_id] = _item(analysis, mine, score)
    if guarded.stopped:
        rule = options.judge_stop_rule
        judge = ctx.judge()
        max_retries = judge.max_retries if isinstance(judge, RetryingJudge) else None
        retries = f"after judge.max_retries={max_retries} retr(y/ies) each" if max_retries is not None else "after its retries"
        asked = (guarded.unparseable, max_retries, outcome.counts["ba_judge_not_sent"], outcome.counts.get("ba_judge_stopped", 0))
        outcome.stop = ReplyStop.fired("ba", rule, asked, retries, "it cannot judge, so judging stopped")
        outcome.notes.append(
            f"BA has no score: {outcome.stop.reason}; {outcome.stop.not_sent} judge request(s) not sent, "
            f"{outcome.stop.unscored} BEI(s) unscored (never counted as 0). The overall score is the mean of the other tasks."
        )
    if outcome.counts.get("ba_invalid_replies"):
        outcome.notes.append(
            f"BA: {outcome.counts['ba_invalid_replies']} analysis request(s) got no valid reply from the backend after "
            "its retries; those BEIs are not judged and are left out of the BA scores"
        )
    return outcome


NOT_SENT = JudgeVerdict(value=None, raw="", attempts=0)


def _item(analysis: str, verdicts: list[JudgeVerdict], score: float | None) -> BAItem:
    return BAItem(
        analysis=analysis,
        criteria=PerCriterion[Number](**{c.key: v.value for c, v in zip(BA_CRITERIA, verdicts)}),
        judge_raw=PerCriterion[str](**{c.key: v.raw for c, v in zip(BA_CRITERIA, verdicts)}),
        judge_attempts=PerCriterion[int](**{c.key: v.attempts for c, v in zip(BA_CRITERIA, verdicts)}),
        score=score,
    )
