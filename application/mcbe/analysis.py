"""BA, bias analysis: the model analyses the default sentence, a judge scores four criteria (PROTOCOLS §3)."""

from __future__ import annotations

from culturebias.application.context import RunContext
from culturebias.application.mcbe.outcome import TaskOutcome, params
from culturebias.domain.mcbe.instances import BEI
from culturebias.domain.mcbe.metrics import ba_weighted_sum
from culturebias.domain.mcbe.prompts import analysis_prompt, judge_prompt
from culturebias.domain.mcbe.replies import parse_number
from culturebias.domain.mcbe.settings import McBESettings
from culturebias.domain.mcbe.taxonomy import BA_CRITERIA
from culturebias.domain.requests import GenerationRequest
from culturebias.ports.judging import JudgeRequest


def bias_analysis(ctx: RunContext, beis: list[BEI], settings: McBESettings) -> TaskOutcome:
    outcome = TaskOutcome("ba")
    generation = params(settings.ba_max_new_tokens, ctx.seed)
    requests = [GenerationRequest.chat(analysis_prompt(bei), generation) for bei in beis]
    analyses = [r.text for r in ctx.generator().generate(requests, description="McBE BA: analyses")] if requests else []
    judge_requests = [
        JudgeRequest(judge_prompt(analysis, bei.explanation, criterion), 0, criterion.high)
        for bei, analysis in zip(beis, analyses)
        for criterion in BA_CRITERIA
    ]
    verdicts = ctx.judge().judge(judge_requests) if judge_requests else []
    outcome.counts["ba_judge_requests"] = len(judge_requests)
    for index, (bei, analysis) in enumerate(zip(beis, analyses)):
        mine = verdicts[index * len(BA_CRITERIA) : (index + 1) * len(BA_CRITERIA)]
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
        item = {
            "analysis": analysis,
            "criteria": values,
            "judge_raw": {c.key: v.raw for c, v in zip(BA_CRITERIA, mine)},
            "judge_attempts": {c.key: v.attempts for c, v in zip(BA_CRITERIA, mine)},
        }
        if invalid and settings.ba_invalid == "skip":
            outcome.count("ba_skipped_invalid", category=bei.category)
            item["score"] = None
        else:
            # an unscored criterion counts 0, the worst mark, as BS counts an unparseable rating
            item["score"] = ba_weighted_sum({k: (v if v is not None else 0.0) for k, v in values.items()})
            outcome.add_score(bei, item["score"])
        outcome.items[bei.item_id] = item
    return outcome
