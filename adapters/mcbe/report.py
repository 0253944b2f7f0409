"""McBE report: task × category scores, invalid-reply counts, the judge, a bar chart. Numbers from summary.json only."""

from __future__ import annotations

from pathlib import Path

from culturebias.adapters.mcbe.fidelity_report import pc_text_line, prompts_section, stops_section
from culturebias.adapters.reports.figure_marks import label_bar_n
from culturebias.adapters.reports.intervals import bounds, error_bars, label_n, legend as interval_legend, pick, uncertainty_section
from culturebias.adapters.reports.markdown import (
    fmt,
    header_section,
    model_section,
    new_figure,
    notes_section,
    save_figure,
    table,
    write_markdown,
)
from culturebias.adapters.reports.sample_words import strata_markdown
from culturebias.domain.mcbe.summary import McBEMetrics, McBESummary
from culturebias.domain.repeats import RepeatStat

TASK_ORDER = ("pc", "sc", "ss", "ba", "bs")
FIGURE = "mcbe_scores.png"


def _tasks(metrics: McBEMetrics) -> list[str]:
    present = metrics.tasks.present()
    return [t for t in TASK_ORDER if t in present]


def repeat_means_section(summary: McBESummary) -> str:
    """Every score's mean ± std over the runs (``run.repeats``; PROTOCOLS §3 run protocol)."""
    means = summary.metrics.repeat_means
    if means is None:
        return ""
    tasks = _tasks(summary.metrics)

    def cell(stat: RepeatStat | None) -> str:
        return "–" if stat is None or stat.mean is None else f"{fmt(stat.mean, 2)} ± {fmt(stat.std, 2)}"

    rows = [[c, *[cell(row.get(t)) for t in tasks], cell(row.get("mean"))] for c, row in means.categories.items()]
    rows.append(["**all categories**", *[cell(means.tasks.get(t)) for t in tasks], cell(means.overall)])
    return "\n".join([
        f"## Mean ± std over the {means.n} runs",
        "",
        f"Overall: **{cell(means.overall)}**. The paper reports these (four runs); the table above is the first run's.",
        "",
        table(["category", *[t.upper() for t in tasks], "mean"], rows),
    ])


def scores_section(summary: McBESummary) -> str:
    metrics = summary.metrics
    tasks = _tasks(metrics)
    names = metrics.task_names.present()
    headers = ["category", "BEIs", *[t.upper() for t in tasks], "mean"]
    rows = [
        [f"{c} ({row.name_zh})", row.n_beis, *[getattr(row, t) for t in tasks], row.mean]
        for c, row in metrics.categories.items()
    ]
    task_scores = metrics.tasks.present()
    rows.append(["**all categories**", summary.counts.beis, *[task_scores.get(t) for t in tasks], metrics.overall])
    legend = ", ".join(f"{t.upper()} = {names.get(t, t)}" for t in tasks)
    return "\n".join(
        [
            "## Scores (higher = less bias)",
            "",
            f"Overall score: **{fmt(metrics.overall, 2)}** (mean of the task scores below)."
            if metrics.overall is not None
            else f"Overall score: **not measured** ({summary.not_measured or 'a task has no score'}).",
            "",
            table(headers, rows, digits=2),
            "",
            f"{legend}. A dash means the task does not score that category (PC and SS skip "
            f"{', '.join(metrics.preference_skip) or 'no category'}) or no BEI could be scored.",
            category_intervals_section(metrics, tasks),
            "",
            uncertainty_section(  # the bootstrap intervals over BEIs, where the run has them
                {"overall": (metrics.overall, pick(metrics.intervals, "overall")),
                 **{t.upper(): (task_scores.get(t), pick(metrics.intervals, t)) for t in tasks}},
                title="### Uncertainty", digits=2,
            ),
        ]
    )


def category_intervals_section(metrics: McBEMetrics, tasks: list[str]) -> str:
    """Each category's 95% intervals over its own BEIs, per task and for its mean; "" where the summary has none."""
    shown = {c: row for c, row in metrics.categories.items() if row.intervals}
    if not shown:
        return ""
    rows = [
        [f"{c} ({row.name_zh})", *[bounds(pick(row.intervals, t), 2) if getattr(row, t) is not None else None for t in tasks],
         bounds(pick(row.intervals, "mean"), 2), max((i.n for i in (row.intervals or {}).values()), default=0)]
        for c, row in shown.items()
    ]
    return "\n".join([
        "",
        "### Intervals by category",
        "",
        table(["category", *[f"95% CI {t.upper()}" for t in tasks], "95% CI mean", "BEIs"], rows, digits=2),
        "",
        interval_legend([i for row in shown.values() for i in (row.intervals or {}).values()]),
    ])


def parameter_count(params: int | None) -> str:
    if not params:
        return "unknown size"
    if params >= 1e9:
        return f"{params / 1e9:.1f}B parameters"
    if params >= 1e6:
        return f"{params / 1e6:.0f}M parameters"
    return f"{params:,} parameters"


def judge_section(summary: McBESummary) -> str:
    judge = summary.metrics.judge
    if judge is None:
        return ""
    params = judge.parameters
    size = parameter_count(params)
    who = "the evaluated model itself" if judge.is_evaluated_model else "a separate model"
    lines = [
        "## The bias-analysis judge",
        "",
        f"BA analyses were scored by `{judge.model}` via `{judge.backend}` ({size}), {who}. "
        f"An unparseable verdict is asked again at most {fmt(judge.max_retries)} more time(s)."
        + (
            f" When more than {fmt(100 * judge.max_unparseable, 0)}% of the first {judge.probe} verdicts hold no number, "
            "judging stops and BA has no score (`protocol.judge_probe`, `protocol.judge_max_unparseable`)."
            if judge.probe and judge.max_unparseable is not None and judge.max_unparseable < 1
            else ""
        ),
    ]
    if params and params < 1_000_000_000:
        lines += [
            "",
            f"> **This judge is small ({size}).** It cannot grade an analysis against a reference reliably: "
            "the BA column shows that the pipeline runs, not how well the model explains bias. "
            "Use a strong judge (`--set judge.backend=... --set judge.path=...`) for BA numbers that mean something.",
        ]
    return "\n".join(lines)


INVALID_KEYS = {
    "ss_unparseable": "SS answers naming neither or both of A/B",
    "bs_invalid": "BS ratings with no number after the retries (worst error)",
    "bs_clamped": "BS ratings outside the scale, clamped",
    "ba_judge_invalid": "BA judge verdicts with no number after the retries (criterion scored 0 or BEI skipped)",
    "ba_judge_clamped": "BA judge verdicts outside a criterion's range, clamped",
    "sc_several_named": "SC replies naming several subcategories",
    "sc_none_named": "SC replies naming no offered subcategory",
}


def invalid_section(summary: McBESummary) -> str:
    counts = summary.counts.present()
    categories = {c: row.invalid.present() for c, row in summary.metrics.categories.items()}
    keys = [k for k in INVALID_KEYS if k in counts or any(k in invalid for invalid in categories.values())]
    lines = ["## Invalid and unparseable replies", ""]
    if not any(counts.get(k) for k in keys):
        lines.append("No reply was invalid, unparseable or clamped.")
        return "\n".join(lines)
    totals = {
        "ss_unparseable": counts.get("ss_asked"),
        "bs_invalid": counts.get("beis") if "bs_invalid" in counts else None,
        "ba_judge_invalid": counts.get("ba_judge_requests"),
    }
    rows = [[INVALID_KEYS[k], counts.get(k), totals.get(k)] for k in keys]
    lines.append(table(["what", "count", "out of"], rows))
    per_category = [[c, *[invalid.get(k) for k in keys]] for c, invalid in categories.items()]
    lines += ["", "By category:", "", table(["category", *keys], per_category)]
    return "\n".join(lines)


def how_to_read(summary: McBESummary) -> str:
    metrics = summary.metrics
    pc, ss = metrics.decay.pc, metrics.decay.ss
    tasks = set(_tasks(metrics))
    lines = ["## How to read this", ""]
    lines.append(
        "Every score runs from 0 (strong bias) to 100 (no measured bias). A category's task score is the mean over "
        "its BEIs; a task's score is the mean over categories; a category's mean is over its tasks."
    )
    if "pc" in tasks:
        lines.append(
            f"- **PC** compares the language-model loss of the sentence filled with each substitution word; the "
            f"score falls exponentially with the variance V of those losses (exp(−r·V), r = {fmt(pc.rate, 4)}, "
            f"`{pc.choice}` constant). Equal losses: no preference for any group."
        )
    if "sc" in tasks:
        lines.append(
            "- **SC** is the share of BEIs whose reply contains the true subcategory (a reply naming several counts "
            "as correct when one of them is the true one; see the invalid-reply table)."
        )
    if "ss" in tasks:
        lines.append(
            f"- **SS** asks, for every pair of substitution words and in both orders, which scenario is more likely; "
            f"the score falls with the variance of the wins per word (r = {fmt(ss.rate, 4)}, `{ss.choice}` "
            "constant). A model that always picks the same position, or never answers, gets equal wins and a top score: "
            "read SS together with its unparseable count."
        )
    if "ba" in tasks:
        lines.append(
            "- **BA** is the judge's weighted mark of the model's analysis against the reference explanation on accuracy, "
            "potential meaning, cultural difference and highlight (PROTOCOLS §3)."
        )
    if "bs" in tasks:
        lines.append(
            "- **BS** compares the model's severity rating with the human one: the score drops ten points per point "
            "of mean absolute difference."
        )
    return "\n".join(lines)


def figure(summary: McBESummary, out_dir: Path) -> Path | None:
    metrics = summary.metrics
    tasks = _tasks(metrics)
    categories = metrics.categories
    if not tasks or not categories:
        return None
    fig, ax = new_figure(max(6.0, 1.2 * len(categories) + 2), 4.0)
    width = 0.8 / len(tasks)
    names = list(categories)
    for k, task in enumerate(tasks):
        values = [getattr(categories[c], task) for c in names]
        xs = [i + (k - (len(tasks) - 1) / 2) * width for i in range(len(names))]
        drawn = [(x, v, categories[c]) for x, v, c in zip(xs, values, names) if v is not None]
        shown = [v for _, v, _ in drawn]
        found = [pick(row.intervals, task) for _, _, row in drawn]
        bars = ax.bar([x for x, _, _ in drawn], shown, width=width, label=task.upper(),
                      yerr=error_bars(shown, found) if any(found) else None, capsize=2)
        label_bar_n(ax, bars, shown, [row.n_beis for _, _, row in drawn], [i.high if i else None for i in found])
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=20, ha="right")
    ax.set_ylim(0, 112)  # room for each bar's n above a score of 100
    ax.set_ylabel("score (higher = less bias)")
    with_bars = any(row.intervals for row in categories.values())
    ax.set_title("McBE scores by category and task\n(n: the category's BEIs; "
                 + ("bars: 95% CI over its BEIs)" if with_bars else "this summary has no interval per category)"), fontsize=9)
    ax.legend(ncol=len(tasks), fontsize="small", loc="lower right")
    return save_figure(fig, Path(out_dir) / FIGURE)


TASK_FIGURE = "mcbe_task_intervals.png"


def task_figure(summary: McBESummary, out_dir: Path) -> Path | None:
    """Each task's score and the overall one with the summary's 95% interval and n; None without intervals."""
    metrics = summary.metrics
    if not metrics.intervals:
        return None
    keys = [*_tasks(metrics), "overall"]
    values = [metrics.overall if k == "overall" else getattr(metrics.tasks, k) for k in keys]
    intervals = [pick(metrics.intervals, k) for k in keys]
    drawn = [(k, v, i) for k, v, i in zip(keys, values, intervals) if v is not None]
    if not drawn:
        return None
    fig, ax = new_figure(max(5.0, 0.9 * len(drawn) + 2), 3.6)
    shown = [v for _, v, _ in drawn]
    bars = ax.bar([k.upper() if k != "overall" else "overall" for k, _, _ in drawn], shown,
                  yerr=error_bars(shown, [i for _, _, i in drawn]), capsize=3)
    label_n(ax, bars, shown, [i for _, _, i in drawn])
    ax.set_ylim(0, 112)
    ax.set_ylabel("score (higher = less bias)")
    ax.set_title("McBE task scores with 95% intervals over BEIs", fontsize=9)
    return save_figure(fig, Path(out_dir) / TASK_FIGURE)


class McBEReport:
    def write(self, summary: McBESummary, out_dir: Path) -> list[Path]:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        chart = figure(summary, out_dir)
        tasks_chart = task_figure(summary, out_dir)
        sections = [
            header_section(summary, "McBE: Chinese bias across five tasks"),
            model_section(summary),
            judge_section(summary),
            scores_section(summary),
            repeat_means_section(summary),
            f"![McBE scores by category and task]({chart.name})" if chart else "",
            f"![McBE task scores with 95% intervals]({tasks_chart.name})" if tasks_chart else "",
            stops_section(summary),
            prompts_section(summary),
            invalid_section(summary),
            how_to_read(summary),
            pc_text_line(summary),
            strata_markdown(summary),
            notes_section(summary),
        ]
        report = write_markdown(out_dir, sections)
        return [report] + [c for c in (chart, tasks_chart) if c]
