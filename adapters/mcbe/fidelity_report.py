"""McBE report sections on how the run followed the paper: stopped replies, PC text, prompt sets.

Numbers from summary.json only.
"""

from __future__ import annotations

from culturebias.adapters.reports.markdown import fmt, table
from culturebias.domain.mcbe.summary import McBESummary
from culturebias.domain.mcbe.prompts import PROMPT_SETS

EFFECT = {
    "no_score": "no score (left out of every mean, never 0)",
    "no_retries": "scored without retries (an unparseable rating is the worst error)",
}


def stops_section(summary: McBESummary) -> str:
    stops = summary.metrics.reply_stops or {}
    if not stops:
        return ""
    rows = [
        [
            task.upper(),
            stop.replier,
            f"{stop.unparseable} / {stop.probe}",
            f"> {fmt(100 * stop.max_unparseable, 0) if stop.max_unparseable is not None else '–'}%",
            stop.not_sent,
            stop.unscored,
            EFFECT[stop.effect],
        ]
        for task, stop in stops.items()
    ]
    lost = [task.upper() for task, stop in stops.items() if stop.effect == "no_score"]
    lines = [
        "## Replies without numbers: stopped",
        "",
        "The first K replies decide (`protocol.judge_probe`); when more than X of them hold no number "
        "(`protocol.judge_max_unparseable`), asking again is pointless and the run stops asking.",
        "",
        table(["task", "who", "unparseable of the first K", "rule", "requests not sent", "BEIs unscored", "result"], rows),
        "",
    ]
    if lost:
        lines.append(
            f"**{', '.join(lost)} lost {'its' if len(lost) == 1 else 'their'} judge-based score in this run**: "
            "the table above shows a dash for it, and the overall score is the mean of the other tasks. "
            "Use a judge that answers with a number (`--set judge.backend=... --set judge.path=...`)."
        )
    for task, stop in stops.items():
        lines.append(f"- {task.upper()}: {stop.reason}.")
    return "\n".join(lines)


def pc_text_line(summary: McBESummary) -> str:
    text = summary.metrics.pc_text
    if text is None:
        return ""
    what = "the context followed by the sentence" if text == "context_sentence" else "the sentence alone (the released code)"
    return f"PC scored {what} (`protocol.pc_text={text}`)."


def prompts_section(summary: McBESummary) -> str:
    metrics = summary.metrics
    sets = metrics.prompt_set
    if not sets:
        return ""
    lines = [
        "## Prompts",
        "",
        f"Prompt set `{sets[0]}` scored every task"
        + (f" ({PROMPT_SETS[sets[0]].description})." if sets[0] in PROMPT_SETS else ".")
        + (f" Further set(s) {', '.join(f'`{s}`' for s in sets[1:])} re-ran SC and BS." if len(sets) > 1 else ""),
    ]
    if metrics.judge_role:
        lines.append(
            f"\nEvery BA judge prompt opened with the role given as protocol.judge_role, on a line of its own in place of "
            f"the prompt set's own role: “{metrics.judge_role}”."
        )
    variants = metrics.prompt_variants or {}
    if not variants:
        return "\n".join(lines)
    rows = []
    notes = []
    for name, variant in variants.items():
        for task, cell in variant.robustness.items():
            rows.append(
                [task.upper(), name, cell.n, cell.spearman, cell.spearman_p, cell.pearson, cell.pearson_p, variant.tasks.get(task)]
            )
            if cell.note:
                notes.append(f"- {task.upper()} under `{name}`: {cell.note}.")
    lines += [
        "",
        "## Prompt robustness",
        "",
        f"Category scores under `{sets[0]}` against each further set (PROTOCOLS §3: Spearman and Pearson, SC and BS):",
        "",
        table(["task", "prompt set", "categories", "Spearman", "p", "Pearson", "p", "task score under it"], rows, digits=3),
    ]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)
