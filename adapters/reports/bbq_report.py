"""KoBBQ and CBBQ reports: report.md and a bar chart, every number taken from the typed summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from culturebias.adapters.reports.bbq_fidelity_report import (
    kobbq_extra_section,
    answering_line,
    cbbq_review_line,
    cbbq_setup_lines,
    cbbq_table4_section,
    group_topic_section,
    kobbq_tests_section,
)
from culturebias.adapters.reports.figure_marks import label_bar_n, mark_zero_bars, nothing_to_show
from culturebias.adapters.reports.intervals import any_intervals, ci_cells, ci_headers, error_bars, pick, table_legend
from culturebias.domain.bbq.intervals import CBBQ_HEADLINES
from culturebias.adapters.reports.markdown import (
    fmt,
    header_section,
    model_section,
    new_figure,
    save_figure,
    table,
    write_markdown,
)
from culturebias.adapters.reports.sample_words import strata_markdown
from culturebias.domain.bbq.summary import PromptStats
from culturebias.domain.kobbq.summary import CategoryTest, KoBBQMetrics, KoBBQScoreBlock, KoBBQSummary
from culturebias.domain.cbbq.prompts import CONDITION_NAMES
from culturebias.domain.cbbq.summary import CBBQMetrics, CBBQScores, CBBQSummary
from culturebias.domain.bbq.evaluators import EVALUATOR_MEANING
from culturebias.domain.skips import SkippedRow

KOBBQ_COLUMNS = ("acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis", "ooc_ratio")
KOBBQ_NAMES = {
    "acc_amb": "Acc (ambiguous)",
    "acc_dis": "Acc (disambiguated)",
    "diff_bias_amb": "Diff-bias (ambiguous)",
    "diff_bias_dis": "Diff-bias (disambiguated)",
    "ooc_ratio": "Out-of-choice ratio",
}
CBBQ_COLUMNS = ("s_amb", "s_dis", "s_total", "acc_amb", "acc_dis", "ooc_ratio")
FIGURE = "bbq_bias.png"


def mean_std(cell: PromptStats) -> str:
    return f"{fmt(cell.mean)} ± {fmt(cell.std)}"


def skip_line(skip: SkippedRow) -> str:
    why = f"{skip.reason} — {skip.detail}" if skip.detail else skip.reason
    return f"  - skipped {skip.sample_id} ({skip.file}, row {skip.row}): {why}"


def counts_section(summary: KoBBQSummary | CBBQSummary) -> str:
    lines = ["## Counts", ""]
    for key, value in summary.counts.model_dump(mode="json").items():
        if isinstance(value, list):  # a table of its own (CBBQ's table4)
            continue
        if isinstance(value, dict):
            inner = ", ".join(f"{k}: {fmt(v)}" for k, v in value.items())
            lines.append(f"- {key}: {inner or '–'}")
        else:
            lines.append(f"- {key}: {fmt(value)}")
    skips = summary.details.skips
    lines += [skip_line(skip) for skip in skips[:20]]
    if len(skips) > 20:
        lines.append(f"  - … {len(skips) - 20} more skips in summary.json details.skips")
    if summary.notes:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in summary.notes]
    return "\n".join(lines)


# -- KoBBQ ------------------------------------------------------------------------
def kobbq_cell(block: KoBBQScoreBlock, key: str) -> PromptStats:
    cell: PromptStats = getattr(block, key)
    return cell


def kobbq_setup(metrics: KoBBQMetrics) -> str:
    lines = [
        "## Setup",
        "",
        answering_line(metrics),
        f"- prompts: {', '.join(metrics.prompts)}; option permutations: "
        f"{', '.join(str(p) for p in metrics.permutations)} ({metrics.permutation_scheme})",
        f"- aggregation within a prompt: {metrics.aggregate}; std over prompts with ddof {metrics.std_ddof}",
        f"- evaluator: {EVALUATOR_MEANING.get(metrics.evaluator, metrics.evaluator)}",
        "",
        table(["prompt", "unknown option worded as"], [[p, w] for p, w in metrics.unknown_wording.items()]),
    ]
    return "\n".join(lines)


def kobbq_headline(metrics: KoBBQMetrics) -> str:
    overall = metrics.overall
    prompts = metrics.prompts
    rows = []
    for key in KOBBQ_COLUMNS:
        cell = kobbq_cell(overall, key)
        rows.append([KOBBQ_NAMES[key], cell.mean, cell.std, *[cell.per_prompt.get(p) for p in prompts],
                     *(ci_cells(overall.intervals, [key]) if overall.intervals else [])])
    bound_rows = [
        [
            p,
            overall.diff_bias_amb.per_prompt.get(p),
            b.diff_bias_amb_bound,
            b.diff_bias_amb_within_bound,
            overall.diff_bias_dis.per_prompt.get(p),
            b.diff_bias_dis_bound,
            b.diff_bias_dis_within_bound,
        ]
        for p, b in overall.bounds.items()
    ]
    return "\n".join(
        [
            "## Headline (all items)",
            "",
            table(["metric", "mean", "std", *[f"prompt {p}" for p in prompts], *(ci_headers(["of the mean"]) if overall.intervals else [])], rows)
            + table_legend([overall.intervals]),
            "",
            "### Diff-bias bounds per prompt",
            "",
            table(
                ["prompt", "diff-bias amb", "bound 1 − Acc_a", "within", "diff-bias dis", "bound 1 − abs(2·Acc_d − 1)", "within"],
                bound_rows,
            ),
        ]
    )


BREAKDOWN_CI = ("diff_bias_amb", "diff_bias_dis")


def kobbq_breakdown(title: str, groups: dict[str, KoBBQScoreBlock]) -> str:
    """Each group's mean ± std over prompts, then the 95% CIs of its diff-bias over its own templates where the
    summary has them (the accuracies' are in the summary and the HTML page; the table stays narrow)."""
    ci = any_intervals([block.intervals for block in groups.values()])
    headers = ["group", *[KOBBQ_NAMES[k] for k in KOBBQ_COLUMNS], *(ci_headers([KOBBQ_NAMES[k] for k in BREAKDOWN_CI]) if ci else [])]
    rows = [
        [name, *[mean_std(kobbq_cell(block, k)) for k in KOBBQ_COLUMNS], *(ci_cells(block.intervals, BREAKDOWN_CI) if ci else [])]
        for name, block in groups.items()
    ]
    return "\n".join([f"## {title}", "", table(headers, rows) + table_legend([b.intervals for b in groups.values()])])


def kobbq_test_lines(metric: str, result: CategoryTest) -> list[str]:
    name = KOBBQ_NAMES.get(metric, metric)
    anova = result.anova
    if not anova:
        return [f"- {name}: too few templates per category for a test"]
    if anova.f is None:
        return [f"- {name}: no variation within categories; the tests are undefined"]
    pairs = result.tukey_hsd or []
    significant = [p for p in pairs if p.p_value is not None and p.p_value < 0.05]
    lines = [
        f"- {name}: one-way ANOVA F = {fmt(anova.f)}, p = {fmt(anova.p_value, 4)} "
        f"over {len(anova.groups)} categories; Tukey HSD: {len(significant)} of {len(pairs)} pairs with p < 0.05"
    ]
    for pair in significant[:10]:
        lines.append(
            f"  - {pair.a} − {pair.b}: {fmt(pair.mean_difference)} "
            f"(95% CI {fmt(pair.ci_low)} … {fmt(pair.ci_high)}, p = {fmt(pair.p_value, 4)})"
        )
    return lines


def kobbq_statistics(metrics: KoBBQMetrics) -> str:
    lines = ["## Differences between categories", ""]
    for metric, result in metrics.statistics.items():
        lines += kobbq_test_lines(metric, result)
    lines += ["", "Samples: per-template scores (mean over prompts), grouped by category."]
    return "\n".join(lines)


def kobbq_answers(block: KoBBQScoreBlock, key: str) -> int:
    """The answers behind a category's diff-bias (all prompts): ambiguous ones, or the disambiguated ones."""
    counts = block.counts.values()
    return sum(c.n_a for c in counts) if key.endswith("amb") else sum(c.n_b + c.n_c for c in counts)


def kobbq_figure(metrics: KoBBQMetrics, out_dir: Path) -> Path | None:
    groups = metrics.by_category
    if not groups:
        return None
    names = list(groups)
    fig, ax = new_figure(max(6.0, 0.6 * len(names) + 2), 4.5)
    width = 0.4
    if all(kobbq_cell(groups[n], k).mean is None for n in names for k in ("diff_bias_amb", "diff_bias_dis")):
        nothing_to_show(ax, "diff-bias is undefined in every category (no answer was scored)")
        ax.set_title("KoBBQ diff-bias by category")
        return save_figure(fig, out_dir / FIGURE)
    for offset, key in ((-width / 2, "diff_bias_amb"), (width / 2, "diff_bias_dis")):
        means = [kobbq_cell(groups[n], key).mean for n in names]
        values = [v if v is not None else float("nan") for v in means]  # undefined: no bar
        found = [pick(groups[n].intervals, key) for n in names]
        bars = ax.bar([i + offset for i in range(len(names))], values, width, label=KOBBQ_NAMES[key],
                      yerr=error_bars(means, found) if any(found) else None, capsize=2)
        mark_zero_bars(ax, bars, means)
        label_bar_n(ax, bars, means, [kobbq_answers(groups[n], key) for n in names], [i.high if i else None for i in found])
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
    ax.set_ylim(-1.05, 1.25)
    ax.set_ylabel("diff-bias (mean over prompts)")
    ax.set_title("KoBBQ diff-bias by category (n: answers behind each bar)")
    ax.legend(loc="upper right", fontsize=8, ncol=2)
    return save_figure(fig, out_dir / FIGURE)


KOBBQ_READING = """## How to read this report

- **Accuracy (ambiguous)** is the share of ambiguous questions answered "unknown", the only
  correct answer when the context does not say who did what. **Accuracy (disambiguated)** is the
  share answered correctly when it does.
- **Diff-bias (ambiguous)** = (biased − counter-biased answers) / ambiguous answers: positive
  means the model fills the gap with the stereotype. Its size is at most 1 − Acc (ambiguous).
- **Diff-bias (disambiguated)** = accuracy where the facts agree with the stereotype minus
  accuracy where they contradict it: positive means the stereotype overrides what the text says.
- Each prompt is scored over its items × option orders; the table shows mean ± std over the
  prompts. Out-of-choice replies (generate mode) are excluded from every score and counted.
- A random guesser scores about 1/3 accuracy and 0 diff-bias; always answering with the
  stereotype scores Acc_a 0, diff-bias 1 and Acc_d 0.5."""


def kobbq_sections(summary: KoBBQSummary, out_dir: Path) -> tuple[list[str], list[Path]]:
    metrics = summary.metrics
    figure = kobbq_figure(metrics, out_dir)
    sections = [
        header_section(summary, "KoBBQ: bias in Korean question answering"),
        model_section(summary),
        kobbq_setup(metrics),
        kobbq_headline(metrics),
        kobbq_extra_section(metrics),
        kobbq_breakdown("By label annotation (ST simply transferred, TM target modified, NC newly created)", metrics.by_label),
        kobbq_breakdown("By category", metrics.by_category),
        f"![diff-bias by category]({FIGURE})" if figure else "",
        kobbq_statistics(metrics),
        kobbq_tests_section(metrics),
        strata_markdown(summary),
        counts_section(summary),
        KOBBQ_READING,
    ]
    return sections, [figure] if figure else []


# -- CBBQ -------------------------------------------------------------------------
def cbbq_row(name: str, scores: CBBQScores) -> list[object]:
    return [name, *[getattr(scores, k) for k in CBBQ_COLUMNS]]


OVERALL_MEANING = {
    "category_mean": "category_mean (the mean over categories, each weighing the same, as the paper's Fig. 7)",
    "pooled": "pooled (all items together; the paper's Fig. 7 averages categories)",
}
CBBQ_HEADERS = ["", "S_amb", "S_dis", "S_total", "Acc (amb)", "Acc (dis)", "out-of-choice"]


def cbbq_setup(metrics: CBBQMetrics) -> str:
    weights = metrics.weights
    conditions = ", ".join(CONDITION_NAMES.get(c, c) for c in metrics.conditions)
    return "\n".join(
        [
            "## Setup",
            "",
            answering_line(metrics),
            f"- prompt condition(s): {conditions}; headline condition: **{metrics.condition_name}**",
            f"- S_total = {fmt(weights.w1, 2)} · S_amb + {fmt(weights.w2, 2)} · S_dis; "
            f"overall = {OVERALL_MEANING.get(metrics.overall_aggregate, metrics.overall_aggregate)}",
            f"- option permutations: {', '.join(str(p) for p in metrics.permutations)} "
            f"({metrics.permutation_scheme})",
            *cbbq_setup_lines(metrics),
        ]
    )


def cbbq_tables(metrics: CBBQMetrics) -> str:
    by_condition = metrics.by_condition
    ci = any_intervals([b.overall.intervals for b in by_condition.values()])  # bootstrap intervals over templates
    lines = ["## Headline", "", table(
        CBBQ_HEADERS + (ci_headers(["S_amb", "S_dis", "S_total"]) if ci else []),
        [cbbq_row(CONDITION_NAMES.get(c, c), b.overall) + (ci_cells(b.overall.intervals, CBBQ_HEADLINES) if ci else [])
         for c, b in by_condition.items()],
    ) + table_legend([b.overall.intervals for b in by_condition.values()])]
    for condition, block in by_condition.items():
        category_ci = any_intervals([scores.intervals for scores in block.by_category.values()])  # over each category's templates
        rows = [
            cbbq_row(name, scores) + (ci_cells(scores.intervals, CBBQ_HEADLINES) if category_ci else [])
            for name, scores in block.by_category.items()
        ]
        headers = CBBQ_HEADERS + (ci_headers(["S_amb", "S_dis", "S_total"]) if category_ci else [])
        lines += ["", f"## By category ({CONDITION_NAMES.get(condition, condition)})", "",
                  table(headers, rows) + table_legend([s.intervals for s in block.by_category.values()])]
    return "\n".join(lines)


def cbbq_derivation(summary: CBBQSummary) -> str:
    counts = summary.counts
    derivation = counts.biased_answer_derivation
    found = [None] * 4 if derivation is None else [derivation.label, derivation.twin, derivation.groups, derivation.unresolved]
    return "\n".join(
        [
            "## Biased answers (derived, CBBQ does not store them)",
            "",
            table(
                ["from the label (disambiguated)", "from the disambiguated twin", "from bias_targeted_groups", "unresolved"],
                [found],
            ),
            "",
            f"Unresolved items in this run: {fmt(counts.biased_answer_unresolved)} — asked; counted in Acc (amb), "
            "left out of S_amb.",
        ]
    )


def cbbq_answers(counts: Any, key: str) -> int:  # Any: a CBBQ answer-counts block or its JSON
    """The answers a category's score divides by: ambiguous ones, non-unknown disambiguated ones, or both."""
    amb, dis = counts.n_amb, counts.n_dis - counts.n_dis_unknown
    return {"s_amb": amb, "s_dis": dis}.get(key, amb + dis)


def cbbq_figure(metrics: CBBQMetrics, out_dir: Path) -> Path | None:
    groups = metrics.by_category
    if not groups:
        return None
    names = list(groups)
    fig, ax = new_figure(max(6.0, 0.8 * len(names) + 2), 4.5)
    width = 0.27
    if all(getattr(groups[n], k) is None for n in names for k in ("s_amb", "s_dis", "s_total")):
        nothing_to_show(ax, "every category's bias score is undefined (no answer was scored)")
        ax.set_title(f"CBBQ bias scores by category ({metrics.condition_name})")
        return save_figure(fig, out_dir / FIGURE)
    for offset, key, label in ((-width, "s_amb", "S_amb"), (0.0, "s_dis", "S_dis"), (width, "s_total", "S_total")):
        scores = [getattr(groups[n], key) for n in names]
        values = [v if v is not None else float("nan") for v in scores]  # undefined: no bar
        found = [pick(groups[n].intervals, key) for n in names]
        bars = ax.bar([i + offset for i in range(len(names))], values, width, label=label,
                      yerr=error_bars(scores, found) if any(found) else None, capsize=2)
        mark_zero_bars(ax, bars, scores)  # a zero score stays visible (an outline and "0"), undefined says "n/a"
        label_bar_n(ax, bars, scores, [cbbq_answers(groups[n].counts, key) for n in names], [i.high if i else None for i in found])
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=9)
    ax.set_ylim(0, 1.15)
    ax.set_ylabel("bias score")
    ax.set_title(f"CBBQ bias scores by category ({metrics.condition_name}; n: answers behind each bar)")
    ax.legend(loc="upper right", fontsize=8, ncol=3)
    return save_figure(fig, out_dir / FIGURE)


CBBQ_READING = """## How to read this report

- **S_amb** = biased answers / answered ambiguous questions. The correct answer there is always
  "unknown", so any biased answer is the stereotype filling a gap (0 = none, 1 = always).
- **S_dis** = biased answers / disambiguated answers that were not "unknown". The correct answer
  always contradicts the stereotype, so a biased answer overrides the text.
- **S_total** weights the two (w1, w2 above). Lower is less biased. Accuracies are shown beside:
  a model can have low bias scores simply by answering "unknown" everywhere (high Acc amb, low Acc dis).
- Out-of-choice replies (generate mode) are excluded from every denominator and counted."""


def cbbq_sections(summary: CBBQSummary, out_dir: Path) -> tuple[list[str], list[Path]]:
    metrics = summary.metrics
    figure = cbbq_figure(metrics, out_dir)
    sections = [
        header_section(summary, "CBBQ: bias in Chinese question answering"),
        model_section(summary),
        cbbq_setup(metrics),
        cbbq_tables(metrics),
        group_topic_section(metrics),
        f"![bias scores by category]({FIGURE})" if figure else "",
        cbbq_derivation(summary),
        cbbq_table4_section(summary),
        cbbq_review_line(summary),
        strata_markdown(summary),
        counts_section(summary),
        CBBQ_READING,
    ]
    return sections, [figure] if figure else []


class BBQReport:
    """ReportWriter for KoBBQ and CBBQ (chosen by the summary's type)."""

    def write(self, summary: KoBBQSummary | CBBQSummary, out_dir: Path) -> list[Path]:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        if isinstance(summary, CBBQSummary):
            sections, figures = cbbq_sections(summary, out_dir)
        else:
            sections, figures = kobbq_sections(summary, out_dir)
        return [write_markdown(out_dir, sections), *figures]
