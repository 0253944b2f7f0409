"""TWBias comparison sections: Table 4 per model, p-value per prompt type (Fig. 2/7), categories (Fig. 3/6), ethnicity matrices."""

from __future__ import annotations

import math
from pathlib import Path

from culturebias.adapters.reports.comparison_bbq import p_cell
from culturebias.adapters.reports.comparison_figures import heat_map, model_colour
from culturebias.adapters.reports.comparison_intervals import twbias_interval_figures
from culturebias.adapters.reports.intervals import pick, table_legend, with_ci
from culturebias.adapters.reports.markdown import fmt, new_figure, save_figure, table
from culturebias.domain.twbias.comparison import HeadlineCell, SpecificationView, TWBiasComparison

METRIC_NAMES = {"bias_ratio": "bias ratio", "effect_size": "effect size"}


def cell(headline: HeadlineCell | None) -> str:
    if headline is None:
        return "–"
    i = headline.intervals  # the run's bootstrap intervals, where it has them: "value [low, high]" and n
    n = f" (n={next(iter(i.values())).n})" if i else ""
    return f"{with_ci(headline.bias_ratio, pick(i, 'bias_ratio'))} / {with_ci(headline.effect_size, pick(i, 'effect_size'))}{n}"


def spec_title(key: str, view: SpecificationView) -> str:
    return f"{key} ({view.origin_label} → {view.reference_label})"


def table4(comparison: TWBiasComparison, axis: str) -> str:
    models = comparison.labels()
    rows = [[spec_title(k, v), *(cell(v.headline.get(m)) for m in models)]
            for k, v in comparison.body.specifications.items() if v.axis == axis]
    return table(["specification", *models], rows)


def side_by_side(models: list[str], rows: dict[str, dict[str, HeadlineCell]], first: str) -> str:
    return table([first, *models], ([key, *(cell(cells.get(m)) for m in models)] for key, cells in rows.items()))


def prompt_table(models: list[str], view: SpecificationView) -> str:
    rows = []
    for ptype, tests in view.prompts.items():
        cells = []
        for m in models:
            test = tests.get(m)
            cells.append("–" if test is None else p_cell(test.p_value, "*" if test.significant else "") + f" (d_z {fmt(test.cohens_dz)})")
        rows.append([ptype, *cells])
    return table(["prompt type", *models], rows)


def p_value_figure(comparison: TWBiasComparison, path: Path) -> Path | None:
    """p per prompt type per model, one panel per specification (paper Fig. 2/7), log scale with α."""
    views = {k: v for k, v in comparison.body.specifications.items() if v.axis == "gender"}
    if not views:
        views = dict(list(comparison.body.specifications.items())[:4])
    if not views:
        return None
    alphas = {a.alpha for a in comparison.body.analysis.values()}
    fig, _ = new_figure(4.5 * len(views), 3.6)
    fig.clf()
    axes = fig.subplots(1, len(views), squeeze=False)[0]
    for ax, (key, view) in zip(axes, views.items()):
        types = list(view.prompts)
        for index, model in enumerate(comparison.labels()):
            ps = [view.prompts[t][model].p_value if model in view.prompts[t] else None for t in types]
            ys = [math.nan if p is None else max(p, 1e-300) for p in ps]
            ax.plot(range(len(types)), ys, marker="o", label=model, color=model_colour(index))
        for alpha in alphas:
            ax.axhline(alpha, color="grey", linestyle="--", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(types)), labels=types, fontsize=8)
        ax.set_xlabel("prompt type")
        ax.set_ylabel("p-value")
        ax.set_title(spec_title(key, view), fontsize=9)
        ax.legend(fontsize=7)
    return save_figure(fig, path)


def matrix_counts(comparison: TWBiasComparison, model: str, origins: list[str], refs: list[str]) -> list[list[int | None]]:
    """Each origin × reference cell's n for ``model``: the sentences of the ethnicity specification behind it."""
    rows = {
        (v.origin_label, v.reference_label): v.headline[model].n_rows
        for v in comparison.body.specifications.values()
        if v.axis == "ethnicity" and model in v.headline
    }
    return [[rows.get((o, r)) for r in refs] for o in origins]


def matrix_figure(comparison: TWBiasComparison, path: Path) -> Path | None:
    matrices = comparison.body.ethnicity_matrices
    if not matrices:
        return None
    effects = [abs(v) for m in matrices.values() for row in m.effect_size.values() for v in row.values() if v is not None]
    scale = max([0.05, *effects])  # one symmetric scale for every model, so colours compare across panels
    fig, _ = new_figure(4.2 * len(matrices), 7.0)
    fig.clf()
    axes = fig.subplots(2, len(matrices), squeeze=False)
    for column, (model, matrix) in enumerate(matrices.items()):
        refs = [matrix.labels.get(r, r) for r in matrix.references]
        origins = [matrix.labels.get(o, o) for o in matrix.origins]
        counts = matrix_counts(comparison, model, origins, refs)
        for row, metric in enumerate(("bias_ratio", "effect_size")):
            values = matrix.bias_ratio if metric == "bias_ratio" else matrix.effect_size
            grid = [[values.get(o, {}).get(r) for r in matrix.references] for o in matrix.origins]
            low, high = (0.0, 1.0) if metric == "bias_ratio" else (-scale, scale)
            heat_map(axes[row][column], grid, origins, refs, f"{model}: {METRIC_NAMES[metric]}", low, high,
                     cmap="Reds" if metric == "bias_ratio" else "RdBu_r", counts=counts)
    return save_figure(fig, path)


def twbias_sections(comparison: TWBiasComparison, out_dir: Path) -> tuple[list[str], list[Path]]:
    body = comparison.body
    models = comparison.labels()
    tests = ", ".join(f"{m}: {a.test} t-test, effect {a.effect}, α = {a.alpha}" for m, a in body.analysis.items())
    sections = [
        "## Bias ratio / effect size per model (paper Table 4)\n\n"
        f"Each cell is bias ratio / effect size. {tests}. Effect size > 0: the stereotype is preferred."
    ]
    figures: list[Path] = []
    for axis in ("gender", "ethnicity"):
        if any(v.axis == axis for v in body.specifications.values()):
            sections.append(f"### {axis.capitalize()}\n\n" + table4(comparison, axis))
    headline_figures = twbias_interval_figures(comparison, Path(out_dir))
    if headline_figures:
        sections.append(table_legend([h.intervals for v in body.specifications.values() for h in v.headline.values()]).strip())
        sections += [f"![{path.stem}]({path.name})" for path in headline_figures]
        figures += headline_figures
    prompts = ["## p-value per prompt type (paper Fig. 2/7)", "", "p (\\* significant at the run's α) and d_z, per model."]
    for key, view in body.specifications.items():
        prompts += ["", f"### {spec_title(key, view)}", "", prompt_table(models, view)]
    sections.append("\n".join(prompts))
    figure = p_value_figure(comparison, Path(out_dir) / "comparison_twbias_p.png")
    if figure is not None:
        figures.append(figure)
        sections.append(f"![p-value per prompt type]({figure.name})")
    categories = ["## By attribute category (paper Fig. 3/6)", "", "bias ratio / effect size per model."]
    for key, view in body.specifications.items():
        categories += ["", f"### {spec_title(key, view)}", "", side_by_side(models, view.by_category, "category")]
    sections.append("\n".join(categories))
    toxicity = ["## By toxicity"]
    for key, view in body.specifications.items():
        toxicity += ["", f"### {spec_title(key, view)}", "", side_by_side(models, view.by_toxicity, "toxicity")]
    sections.append("\n".join(toxicity))
    if body.ethnicity_matrices:
        matrices = ["## Ethnicity matrices, origin × reference (paper Figs. 4–5)"]
        for model, matrix in body.ethnicity_matrices.items():
            for metric in ("bias_ratio", "effect_size"):
                values = matrix.bias_ratio if metric == "bias_ratio" else matrix.effect_size
                rows = [[matrix.labels.get(o, o), *(values.get(o, {}).get(r) for r in matrix.references)] for o in matrix.origins]
                matrices += ["", f"### {model}: {METRIC_NAMES[metric]}", "",
                             table(["origin \\ reference", *(matrix.labels.get(r, r) for r in matrix.references)], rows)]
        sections.append("\n".join(matrices))
        figure = matrix_figure(comparison, Path(out_dir) / "comparison_twbias_ethnicity.png")
        if figure is not None:
            figures.append(figure)
            sections.append(f"![ethnicity matrices side by side]({figure.name})")
    return sections, figures
