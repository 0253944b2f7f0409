"""SC and BS under each further prompt set of ``protocol.prompt_set``, and their robustness correlations."""

from __future__ import annotations

from collections.abc import Mapping

from culturebias.application.context import RunContext
from culturebias.application.mcbe.classification import subcategory_classification
from culturebias.application.mcbe.outcome import TaskOutcome
from culturebias.application.mcbe.scoring import bias_scoring
from culturebias.domain.mcbe.instances import BEI, McBEDataset
from culturebias.domain.mcbe.metrics import aggregate
from culturebias.domain.mcbe.options import McBEOptions
from culturebias.domain.mcbe.prompts import VARIANT_TASKS, prompt_set
from culturebias.domain.mcbe.robustness import PromptVariant, robustness

# The counts a variant reports (zeros included), per task.
VARIANT_COUNTS = {"sc": ("sc_none_named", "sc_several_named", "sc_invalid_replies"), "bs": ("bs_invalid", "bs_clamped")}


def prompt_variants(
    ctx: RunContext, beis: list[BEI], dataset: McBEDataset, options: McBEOptions, outcomes: Mapping[str, TaskOutcome]
) -> dict[str, PromptVariant]:
    tasks = [t for t in VARIANT_TASKS if t in outcomes]
    if not tasks:
        return {}
    categories = list(dict.fromkeys(b.category for b in beis))
    first = aggregate({t: outcomes[t].scores for t in tasks}, categories, tasks)
    variants: dict[str, PromptVariant] = {}
    for name in options.prompt_set[1:]:
        wording = prompt_set(name)
        runs: dict[str, TaskOutcome] = {}
        if "sc" in tasks:
            runs["sc"] = subcategory_classification(ctx, beis, dataset, options, prompts=wording)
        if "bs" in tasks:
            runs["bs"] = bias_scoring(ctx, beis, options, prompts=wording)
        scores = aggregate({t: o.scores for t, o in runs.items()}, categories, tasks)
        variants[name] = PromptVariant(
            against=options.prompt_set[0],
            tasks={t: scores.tasks[t] for t in tasks},
            categories={c: {t: scores.categories[c][t] for t in tasks} for c in categories},
            invalid={key: runs[t].counts.get(key, 0) for t in tasks for key in VARIANT_COUNTS[t]},
            robustness={
                t: robustness({c: first.categories[c][t] for c in categories}, {c: scores.categories[c][t] for c in categories})
                for t in tasks
            },
        )
    return variants
