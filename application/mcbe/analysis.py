"""BA, bias analysis: the model analyses the default sentence, a judge scores four criteria (PROTOCOLS §3)."""

from __future__ import annotations

from culturebias.application.context import RunContext
from culturebias.application.mcbe.outcome import TaskOutcome, params
from culturebias.domain.mcbe.instances import BEI
from culturebias.domain.mcbe.metrics import ba_weighted_sum
from culturebias.domain.mcbe.options import McBEOptions
from culturebias.domain.mcbe.prompts import analysis_prompt, judge_prompt
from culturebias.domain.mcbe.replies import REMINDER
from culturebias.domain.mcbe.summary import BAItem, PerCriterion
from culturebias.domain.mcbe.taxonomy import BA_CRITERIA
from culturebias.domain.replies import parse_number
from culturebias.domain.requests import GenerationRequest
from culturebias.domain.summary import Number
from culturebias.ports.judging import JudgeRequest


def bias_analysis(ctx: RunContext, beis: list[BEI], options: McBEOptions) -> TaskOutcome:
    outcome = TaskOutcome("ba")
    generation = params(options.ba_max_new_tokens, ctx.seed)
    requests = [GenerationRequest.chat(analysis_prompt(bei), generation) for bei in beis]
    replies = ctx.generator().generate(requests, description="McBE BA: analyses") if requests else []
    analyses = [r.text for r in replies]
    # An analysis that never came (no valid reply after the backend's retries) is not judged.
    judged = {index: k for k, index in enumerate(i for i, r in enumerate(replies) if not r.invalid)}
    judge_requests = [
        JudgeRequest(judge_prompt(analyses[index], beis[index].explanation, criterion), 0, criterion.high, REMINDER)
        for index in judged
        for criterion in BA_CRITERIA
    ]
    verdicts = ctx.judge().judge(judge_requests) if judge_requests else []
    outcome.counts["ba_judge_requests"] = len(judge_requests)
    for index, (bei, analysis) in enumerate(zip(beis, analyses)):
        if index not in judged:
            outcome.count("ba_invalid_replies", category=bei.category)
            outcome.items[bei.item_id] = BAItem(
                analysis="",
                criteria=PerCriterion[Number](**{c.key: None for c in BA_CRITERIA}),
                judge_raw=PerCriterion[str](**{c.key: "" for c in BA_CRITERIA}),
                judge_attempts=PerCriterion[int](**{c.key: 0 for c in BA_CRITERIA}),
                score=None,
            )
            continue
        slot = judged[index]
        mine = verdicts[slot * len(BA_CRITERIA) : (slot + 1) * len(BA_CRITERIA)]
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
        outcome.items[bei.item_id] = BAItem(
            analysis=analysis,
            criteria=PerCriterion[Number](**values),
            judge_raw=PerCriterion[str](**{c.key: v.raw for c, v in zip(BA_CRITERIA, mine)}),
            judge_attempts=PerCriterion[int](**{c.key: v.attempts for c, v in zip(BA_CRITERIA, mine)}),
            score=score,
        )
    if outcome.counts.get("ba_invalid_replies"):
        outcome.notes.append(
            f"BA: {outcome.counts['ba_invalid_replies']} analysis request(s) got no valid reply from the backend after "
            "its retries; those BEIs are not judged and are left out of the BA scores"
        )
    return outcome
