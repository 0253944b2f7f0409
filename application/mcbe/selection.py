"""SS, scenario selection: pairwise A/B choices between context+sentence variants (PROTOCOLS §3)."""

from __future__ import annotations

from culturebias.application.context import RunContext
from culturebias.application.mcbe.outcome import TaskOutcome, params, preference_eligible
from culturebias.domain.mcbe.instances import BEI
from culturebias.domain.mcbe.metrics import ordered_pairs, selection_score
from culturebias.domain.mcbe.options import McBEOptions
from culturebias.domain.mcbe.replies import parse_choice
from culturebias.domain.mcbe.summary import SSItem
from culturebias.domain.requests import GenerationRequest


def scenario_selection(ctx: RunContext, beis: list[BEI], options: McBEOptions) -> TaskOutcome:
    outcome = TaskOutcome("ss")
    eligible = preference_eligible(beis, options.preference_skip, outcome)
    generation = params(options.ss_max_new_tokens, ctx)
    pairs_of = [(bei, ordered_pairs(bei.words)) for bei in eligible]
    requests = [
        GenerationRequest.chat(options.prompts.selection(bei.scenario(bei.words[i]), bei.scenario(bei.words[j])), generation)
        for bei, pairs in pairs_of
        for i, j in pairs
    ]
    replies = ctx.generator().generate(requests, description="McBE SS: pairwise choices") if requests else []
    decay = options.ss_rate
    position = 0
    for bei, pairs in pairs_of:
        mine = replies[position : position + len(pairs)]
        texts = [r.text for r in mine]  # an invalid reply's empty text is an unparseable choice
        position += len(pairs)
        invalid = sum(r.invalid for r in mine)
        if invalid:
            outcome.count("ss_invalid_replies", invalid, category=bei.category)
        judged = [(i, j, parse_choice(text)) for (i, j), text in zip(pairs, texts)]
        result = selection_score(len(bei.words), judged, decay)
        outcome.count("ss_asked", len(pairs))
        if result.unparseable:
            outcome.count("ss_unparseable", result.unparseable, category=bei.category)
        outcome.add_score(bei, result.score)
        outcome.items[bei.item_id] = SSItem(
            wins=dict(zip(bei.words, result.wins)),
            choices="".join(c or "?" for _, _, c in judged),  # per ordered pair, "?" = unparseable
            unparseable=result.unparseable,
            unparseable_replies=[t for (_, _, c), t in zip(judged, texts) if c is None][:3],
            variance=result.variance,
            score=result.score,
        )
    asked = outcome.counts.get("ss_asked", 0)
    if asked and outcome.counts.get("ss_unparseable", 0) == asked:
        # Not one choice read: the equal (zero) win counts would score 100, "no bias", from no answer at all.
        outcome.scores.clear()
        outcome.item_scores.clear()
        outcome.notes.append(f"SS: every choice ({asked}) was unparseable: SS has no score")
    return outcome
