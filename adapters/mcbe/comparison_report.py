"""McBE comparison sections: category × task per model (paper Figs. 6–8), Friedman, Spearman and Pearson."""

from __future__ import annotations

from pathlib import Path

from culturebias.adapters.reports.comparison_bbq import p_cell
from culturebias.adapters.reports.comparison_figures import grouped_bars
from culturebias.adapters.reports.intervals import ci_cells, ci_headers, pick, table_legend
from culturebias.adapters.reports.markdown import table
from culturebias.domain.mcbe.comparison import McBEComparison

TASK_NAMES = {"pc": "PC", "sc": "SC", "ss": "SS", "ba": "BA", "bs": "BS"}


def mcbe_sections(comparison: McBEComparison, out_dir: Path) -> tuple[list[str], list[Path]]:
    body = comparison.body
    tasks = body.tasks
    names = [TASK_NAMES.get(t, t) for t in tasks]
    intervals = body.intervals or {}  # model → "overall"/task → the run's bootstrap interval over BEIs
    overview = [
        [model, *(body.task_means[model].get(t) for t in tasks), body.overall[model],
         *(ci_cells(intervals.get(model), ["overall"]) if intervals else [])]
        for model in body.task_means
    ]
    runs = body.runs or {}
    over_runs = (
        "Each score is the mean over the model's runs (" + ", ".join(f"{m}: {n}" for m, n in runs.items())
        + "; PROTOCOLS §3 run protocol); std over the runs below.\n\n"
        if runs else ""
    )
    sections = [
        "## Task scores per model\n\nScores 0–100, higher = less bias; a task's score is the mean over categories.\n\n"
        + over_runs
        + table(["model", *names, "overall", *(ci_headers(["overall"]) if intervals else [])], overview, digits=2)
        + table_legend(list(intervals.values()))
    ]
    if body.std:
        std_rows = [[model, *(body.std[model].get(t) for t in tasks), body.std[model].get("overall")] for model in body.std]
        sections.append("### Std over the runs\n\n" + table(["model", *names, "overall"], std_rows, digits=2))
    per_model = ["## Category × task per model (paper Figs. 6–8)"]
    for model, categories in body.cells.items():
        rows = [[c, *(categories.get(c, {}).get(t) for t in tasks), body.category_means[model].get(c)]
                for c in body.categories if c in categories]
        per_model += ["", f"### {model}", "", table(["category", *names, "mean"], rows, digits=2)]
    sections.append("\n".join(per_model))
    if body.friedman is not None:
        f = body.friedman
        friedman = (f"Friedman χ² = {f.statistic:.3f}, p = {p_cell(f.p_value, '')}, over {f.n_blocks} category × task cells "
                    f"every one of the {f.n_models} models scored.")
    else:
        friedman = f"Not computed: {body.friedman_note}."
    sections.append("## Friedman test across models\n\n" + friedman)
    correlations = [[r.a, r.b, r.spearman, p_cell(r.spearman_p, ""), r.pearson, p_cell(r.pearson_p, ""), r.n]
                    for r in body.correlations]
    sections.append(
        "## Spearman and Pearson between models\n\nOver the category × task cells both models scored.\n\n"
        + table(["model a", "model b", "Spearman ρ", "p", "Pearson r", "p", "cells"], correlations)
    )
    if body.prompt_robustness:
        rows = [[r.task.upper(), r.against, r.prompt_set, r.correlation.spearman, p_cell(r.correlation.spearman_p, ""),
                 r.correlation.pearson, p_cell(r.correlation.pearson_p, ""), r.correlation.n] for r in body.prompt_robustness]
        sections.append(
            "## Prompt robustness across models (paper Table 12)\n\nSC and BS under the first prompt set against a further "
            "set, over the model × category cells of every compared run that ran both.\n\n"
            + table(["task", "first set", "further set", "Spearman ρ", "p", "Pearson r", "p", "cells"], rows)
            + "".join(f"\n\n- {r.task.upper()} under `{r.prompt_set}`: {r.correlation.note}." for r in body.prompt_robustness if r.correlation.note)
        )
    figure = grouped_bars(
        Path(out_dir) / "comparison_mcbe.png",
        names,
        {model: [body.task_means[model].get(t) for t in tasks] for model in body.task_means},
        "McBE task scores per model (higher = less bias" + ("; 95% CI over BEIs)" if intervals else ")"),
        "score (0–100)",
        intervals={model: [pick(intervals[model], t) for t in tasks] for model in intervals} or None,
        not_measured=comparison.not_measured(),
    )
    sections.append(f"![McBE task scores per model]({figure.name})")
    return sections, [figure]
