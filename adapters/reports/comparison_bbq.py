"""KoBBQ and CBBQ comparison sections: Table 3, Wilcoxon between models, Tukey HSD (Figs. 3–4); the CBBQ heat map (Fig. 5)."""

from __future__ import annotations

from pathlib import Path

from culturebias.adapters.reports.comparison_figures import grouped_bars, heat_map
from culturebias.adapters.reports.comparison_intervals import CBBQ_METRICS, overall_interval_figures
from culturebias.adapters.reports.intervals import any_intervals, ci_cells, ci_headers, pick, table_legend, with_ci
from culturebias.domain.bbq.intervals import KOBBQ_HEADLINES
from culturebias.adapters.reports.markdown import fmt, new_figure, save_figure, table
from culturebias.domain.cbbq.comparison import HEATMAP_METRICS, CBBQComparison
from culturebias.domain.bbq.fidelity_summary import RankSumRow, TukeyTest
from culturebias.domain.kobbq.comparison import KoBBQComparison, KoBBQRow
from culturebias.domain.bbq.summary import PromptStats
from culturebias.domain.cbbq.summary import CBBQScores

KOBBQ_HEADERS = ["model", "Acc amb", "Acc dis", "Diff-bias amb", "Diff-bias dis", "OOC ratio"]
CBBQ_NAMES = {"s_amb": "S_amb", "s_dis": "S_dis", "s_total": "S_total"}


def mean_std(cell: PromptStats) -> str:
    return f"{fmt(cell.mean)} ± {fmt(cell.std)}"


def table3(rows: dict[str, KoBBQRow]) -> str:
    ci = any_intervals([row.intervals for row in rows.values()])  # the runs' bootstrap intervals of the means, where they have them
    return table(
        KOBBQ_HEADERS + (ci_headers(KOBBQ_HEADERS[1:5]) if ci else []),
        ([name, *(mean_std(getattr(row, m)) for m in ("acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis", "ooc_ratio")),
          *(ci_cells(row.intervals, KOBBQ_HEADLINES) if ci else [])]
         for name, row in rows.items()),
    )


def p_cell(p: float | None, marks: str) -> str:
    if p is None:
        return "–"
    return (f"{p:.2e}" if p < 1e-3 else f"{p:.3f}") + (f" {marks}" if marks else "")


def wilcoxon_table(rows: list[RankSumRow]) -> str:
    return table(
        ["metric", "model a", "model b", "z", "p", "templates a", "templates b"],
        ([r.metric, r.a, r.b, r.statistic, p_cell(r.p_value, r.mark), r.n_a, r.n_b] for r in rows),
    )


def tukey_block(test: TukeyTest | None, title: str) -> str:
    if test is None:
        return f"**{title}**: not computed (fewer than two groups with two defined values)."
    anova = test.anova
    means = ", ".join(f"{name} {fmt(test.means.get(name))} (n={n})" for name, n in test.n.items())
    lines = [
        f"**{title}**: one-way ANOVA F = {fmt(anova.f)}, p = {p_cell(anova.p_value, '')}; means {means}"
        + (f"; left out (fewer than two values): {', '.join(anova.left_out)}" if anova.left_out else ""),
        "",
        table(
            ["a", "b", "mean(a) − mean(b)", "p (Tukey)", f"{test.confidence:.0%} CI", f"significant at {test.confidence:.0%}"],
            ([p.a, p.b, p.mean_difference, p_cell(p.p_value, ""), f"[{fmt(p.ci_low)}, {fmt(p.ci_high)}]", p.significant]
             for p in test.pairs),
        ),
    ]
    return "\n".join(lines)


def kobbq_sections(comparison: KoBBQComparison, out_dir: Path) -> tuple[list[str], list[Path]]:
    body = comparison.body
    sections = ["## Accuracy and diff-bias per model (paper Table 3)\n\nMean ± std over prompts, as each run's summary holds them.\n\n"
                + table3(body.table3) + table_legend([row.intervals for row in body.table3.values()])]
    for label_type, rows in body.table3_by_label.items():
        sections.append(f"### Label type {label_type}\n\n" + table3(rows))
    wilcoxon = [
        "## Wilcoxon rank-sum between models",
        "",
        f"Two-sided, over {body.wilcoxon_sample}; z > 0: model a ranks higher. Marks: {body.marks}. "
        "The paper's Table 4 applies this test between two data sets (KoBBQ and a translated BBQ) for one model; "
        "here it runs between every two models on the same data (the run's own report holds the Table 4 test "
        "where the data folder has a reference data set).",
    ]
    for label_type in ["all", *body.label_types]:
        ranked = [r for r in body.wilcoxon if r.label_type == label_type]
        heading = "All templates" if label_type == "all" else f"Label type {label_type}"
        wilcoxon += ["", f"### {heading}", "", wilcoxon_table(ranked)]
    sections.append("\n".join(wilcoxon))
    tukey = [
        "## Tukey HSD on normalised diff-bias, and across label types on accuracy too (paper Figs. 3–4)",
        "",
        f"Normalised diff-bias: {body.normalisation}. Family-wise confidence 99%.",
        "",
        "### Across models",
    ]
    for metric, test in body.tukey_across_models.items():
        tukey += ["", tukey_block(test, metric)]
    for model, tests in body.tukey_across_labels.items():
        tukey += ["", f"### Across label types: {model}"]
        for metric, test in tests.items():
            tukey += ["", tukey_block(test, metric)]
    sections.append("\n".join(tukey))
    names = list(body.table3)
    figure = grouped_bars(
        Path(out_dir) / "comparison_kobbq.png",
        ["diff-bias amb", "diff-bias dis"],
        {name: [body.table3[name].diff_bias_amb.mean, body.table3[name].diff_bias_dis.mean] for name in names},
        "KoBBQ diff-bias per model (mean over prompts; "
        + ("95% CI over templates)" if any_intervals([body.table3[n].intervals for n in names]) else "± std over prompts)"),
        "diff-bias",
        errors={name: [body.table3[name].diff_bias_amb.std, body.table3[name].diff_bias_dis.std] for name in names},
        intervals={
            name: [pick(body.table3[name].intervals, "diff_bias_amb"), pick(body.table3[name].intervals, "diff_bias_dis")]
            for name in names
            if body.table3[name].intervals
        },
        not_measured=comparison.not_measured(),
    )
    sections.append(f"![KoBBQ diff-bias per model]({figure.name})")
    return sections, [figure]


# -- CBBQ ---------------------------------------------------------------------------
def cbbq_value(scores: CBBQScores | None, metric: str) -> float | None:
    return None if scores is None else getattr(scores, metric)


def cbbq_heat_figure(comparison: CBBQComparison, path: Path) -> Path:
    body = comparison.body
    models = list(body.by_category)
    columns = [*body.categories, "overall"]
    fig, axes = new_figure(max(6.0, 1.1 * len(columns) * len(HEATMAP_METRICS) / 2), 1.2 + 0.45 * len(models))
    fig.clf()
    axes = fig.subplots(1, len(HEATMAP_METRICS))
    for ax, metric in zip(axes, HEATMAP_METRICS):
        grid = [
            [*(cbbq_value(body.by_category[m].get(c), metric) for c in body.categories), cbbq_value(body.overall[m], metric)]
            for m in models
        ]
        heat_map(ax, grid, models, columns, CBBQ_NAMES[metric], vmin=0.0, vmax=1.0, cmap="Reds")
    return save_figure(fig, path)


def cbbq_sections(comparison: CBBQComparison, out_dir: Path) -> tuple[list[str], list[Path]]:
    body = comparison.body
    conditions = ", ".join(f"{name}: {condition}" for name, condition in body.condition.items())
    sections = [f"## Bias scores, models × categories (paper Fig. 5)\n\nHeadline condition per model: {conditions}. "
                "S > 0: answers follow the stereotype."]
    ci = any_intervals([s.intervals for s in body.overall.values()])
    category_ci = any_intervals([s.intervals for cats in body.by_category.values() for s in cats.values()])

    def category_cell(scores: CBBQScores | None, metric: str) -> object:
        value = cbbq_value(scores, metric)
        if not category_ci or scores is None or value is None:
            return value
        return with_ci(value, pick(scores.intervals, metric))

    for metric in HEATMAP_METRICS:
        rows = [
            [name, *(category_cell(cats.get(c), metric) for c in body.categories), cbbq_value(body.overall[name], metric),
             *(ci_cells(body.overall[name].intervals, [metric]) if ci else [])]
            for name, cats in body.by_category.items()
        ]
        headers = ["model", *body.categories, "overall", *(ci_headers(["overall"]) if ci else [])]
        legend = table_legend([s.intervals for s in body.overall.values()])
        if category_ci:
            legend += " Brackets in a category's cell: its 95% CI over the category's templates."
        sections.append(f"### {CBBQ_NAMES[metric]}\n\n" + table(headers, rows) + legend)
    accuracy = [
        [name, s.acc_amb, s.acc_dis, s.ooc_ratio, s.counts.n_total, f"{body.weights[name].w1}/{body.weights[name].w2}"]
        for name, s in body.overall.items()
    ]
    sections.append("### Accuracy and answers\n\n" + table(["model", "Acc amb", "Acc dis", "OOC ratio", "answers", "w1/w2"], accuracy))
    per_model = ["## Per model, by condition"]
    for name, conditions_of in body.by_condition.items():
        rows = [[condition, b.overall.s_amb, b.overall.s_dis, b.overall.s_total, b.overall.acc_amb, b.overall.acc_dis]
                for condition, b in conditions_of.items()]
        per_model += ["", f"### {name}", "", table(["condition", "S_amb", "S_dis", "S_total", "Acc amb", "Acc dis"], rows)]
    sections.append("\n".join(per_model))
    figure = cbbq_heat_figure(comparison, Path(out_dir) / "comparison_cbbq.png")
    sections.append(f"![CBBQ bias scores, models × categories]({figure.name})")
    bars = overall_interval_figures(
        comparison, Path(out_dir), comparison.body.overall, CBBQ_METRICS, "CBBQ bias scores (95% CI over templates)", "bias score"
    )  # S per model with 95% CIs, where the runs have them
    sections += [f"![CBBQ bias scores per model with 95% CIs]({path.name})" for path in bars]
    return sections, [figure, *bars]
