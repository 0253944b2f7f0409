"""SC, subcategory classification: name the default sentence's subcategory (PROTOCOLS §3)."""

from __future__ import annotations

from culturebias.application.context import RunContext
from culturebias.application.mcbe.outcome import TaskOutcome, params
from culturebias.domain.mcbe.instances import BEI, McBEDataset
from culturebias.domain.mcbe.metrics import classification_correct, named_subcategories
from culturebias.domain.mcbe.options import McBEOptions
from culturebias.domain.mcbe.prompts import PromptSet
from culturebias.domain.mcbe.summary import SCItem
from culturebias.domain.requests import GenerationRequest


def sc_text(bei: BEI, options: McBEOptions) -> str:
    return bei.scenario(bei.default_word) if options.sc_text == "context_sentence" else bei.default_sentence


def subcategory_classification(
    ctx: RunContext, beis: list[BEI], dataset: McBEDataset, options: McBEOptions, prompts: PromptSet | None = None
) -> TaskOutcome:
    """``prompts``: another prompt set than the run's first (a robustness variant)."""
    outcome = TaskOutcome("sc")
    wording = prompts or options.prompts
    # The options are the subcategories found in the data for the BEI's category.
    offered = {category: dataset.subcategories(category) for category in {b.category for b in beis}}
    generation = params(options.sc_max_new_tokens, ctx)
    conversations = [wording.classification(sc_text(b, options), offered[b.category]) for b in beis]
    requests = [GenerationRequest.chat(conversation, generation) for conversation in conversations]
    description = "McBE SC: subcategories" + (f" ({wording.name} prompts)" if prompts else "")
    replies = ctx.generator().generate(requests, description=description) if requests else []
    for bei, reply in zip(beis, replies):
        if reply.invalid:  # no text came back: no answer to grade, so no score of 0 either
            outcome.count("sc_invalid_replies", category=bei.category)
            outcome.items[bei.item_id] = SCItem(reply="", correct=False, named=[])
            continue
        correct = classification_correct(bei.subtype, reply.text)
        named = named_subcategories(reply.text, offered[bei.category])
        if len(named) > 1:
            outcome.count("sc_several_named", category=bei.category)
        if not named:
            outcome.count("sc_none_named", category=bei.category)
        outcome.add_score(bei, 100.0 if correct else 0.0)
        outcome.items[bei.item_id] = SCItem(reply=reply.text, correct=correct, named=named)
    if outcome.counts.get("sc_several_named"):
        outcome.notes.append(
            f"SC: {outcome.counts['sc_several_named']} repl(y/ies) named more than one subcategory; "
            "the protocol counts a reply as correct whenever the true subcategory appears in it"
        )
    if outcome.counts.get("sc_invalid_replies"):
        outcome.notes.append(
            f"SC: {outcome.counts['sc_invalid_replies']} BEI(s) got no valid reply from the backend after its retries; "
            "they are left out of the SC scores"
        )
    return outcome
