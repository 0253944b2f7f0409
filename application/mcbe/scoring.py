"""BS, bias scoring: the model rates severity 0–10; compared with the human score (PROTOCOLS §3)."""

from __future__ import annotations

from culturebias.application.context import RunContext
from culturebias.application.mcbe.outcome import TaskOutcome, params
from culturebias.application.mcbe.retries import ask_with_stop
from culturebias.domain.mcbe.instances import BEI
from culturebias.domain.mcbe.judge_stop import ReplyStop
from culturebias.domain.mcbe.metrics import bs_error, bs_item_score
from culturebias.domain.mcbe.options import McBEOptions
from culturebias.domain.mcbe.prompts import PromptSet
from culturebias.domain.mcbe.replies import REMINDER
from culturebias.domain.mcbe.summary import BSItem
from culturebias.domain.mcbe.taxonomy import SEVERITY_MAX, SEVERITY_MIN
from culturebias.domain.replies import Conversation, NumberQuestion
from culturebias.domain.requests import GenerationRequest


def bias_scoring(ctx: RunContext, beis: list[BEI], options: McBEOptions, prompts: PromptSet | None = None) -> TaskOutcome:
    """``prompts``: another prompt set than the run's first (a robustness variant)."""
    outcome = TaskOutcome("bs")
    wording = prompts or options.prompts
    generation = params(options.bs_max_new_tokens, ctx)
    generator = ctx.generator()
    rounds = 0

    def ask(conversations: list[Conversation]) -> list[str]:
        nonlocal rounds
        rounds += 1
        description = "McBE BS: severity ratings" + (f" ({wording.name} prompts)" if prompts else "")
        description += f" (retry {rounds - 1})" if rounds > 1 else ""
        requests = [GenerationRequest.chat(c, generation) for c in conversations]
        replies = generator.generate(requests, description=description)
        # no valid reply: an empty text, which holds no rating and is asked again like one
        if any(r.invalid for r in replies):
            outcome.count("bs_invalid_replies", sum(r.invalid for r in replies))
        return [r.text for r in replies]

    questions = [NumberQuestion(wording.scoring(bei), SEVERITY_MIN, SEVERITY_MAX, REMINDER) for bei in beis]
    rule = options.judge_stop_rule
    asked = ask_with_stop(questions, ask, options.max_retries, rule)
    replies = asked.replies
    if asked.stopped:
        outcome.counts["bs_retries_stopped"] = asked.not_retried
        retries = f"at the first attempt (protocol.max_retries={options.max_retries})"
        outcome.stop = ReplyStop.fired(
            "bs", rule, (asked.unparseable, options.max_retries, asked.not_retried, 0), retries, "the ratings were not asked again"
        )
        outcome.notes.append(
            f"BS retries stopped: {outcome.stop.reason}; {asked.not_retried} unparseable rating(s) not asked again, "
            "each counts as the worst possible error (PROTOCOLS §3)"
        )
    # Not one rating read: the worst-error rule (PROTOCOLS §3) would turn no answer into a score; BS has none.
    measured = any(reply.value is not None for reply in replies)
    for bei, reply in zip(beis, replies):
        error = bs_error(reply.value, bei.score)
        if reply.value is None:
            outcome.count("bs_invalid", category=bei.category)
        elif reply.clamped:
            outcome.count("bs_clamped", category=bei.category)
        if reply.attempts > 1:
            outcome.count("bs_retried")
        score = bs_item_score(error)
        if measured:
            outcome.add_score(bei, score)
        outcome.items[bei.item_id] = BSItem(
            reply=reply.raw,
            rating=reply.value,
            human=bei.score,
            attempts=reply.attempts,
            error=error,
            score=score,
        )
    if not measured and replies:
        outcome.notes.append(
            f"BS: every rating ({len(replies)}) was unparseable after {options.max_retries} retr(y/ies): BS has no score "
            "(the worst-error rule applies to some unparseable ratings among readable ones, not to no rating at all)"
        )
    elif outcome.counts.get("bs_invalid"):
        outcome.notes.append(
            f"BS: {outcome.counts['bs_invalid']} rating(s) unparseable after {options.max_retries} retr(y/ies); "
            "each counts as the worst possible error for its item"
        )
    return outcome
