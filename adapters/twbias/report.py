"""TWBias report: report.md and two heat maps, every number read from the typed summary."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Mapping

from culturebias.adapters.reports.figure_marks import label_cells
from culturebias.adapters.twbias.few_pairs import few_words
from culturebias.adapters.twbias.figures import category_figure, p_value_figure
from culturebias.adapters.reports.intervals import any_intervals, ci_cells, ci_headers, table_legend
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
from culturebias.domain.twbias.summary import (
    EthnicityMatrixBlock,
    GroupBlock,
    PromptStatsBlock,
    SpecificationBlock,
    TWBiasSummary,
)

HOW_TO_READ = """## How to read this report

Each labelled stereotype sentence is scored as the assistant's reply to a user
prompt (prompt types 1–10), to an empty user turn (type 00), or on its own
without any chat template (type 0). The origin group's terms in the sentence are
then swapped for a reference group's terms, and the perplexity (PPL) of the
original and the swapped sentences is compared with a t-test per prompt type,
after dropping rows more than `outlier_sigma` standard deviations from the mean.

- **Bias ratio**: the share of the user prompts (types 1–10) where the
  difference is significant (p < alpha). 1 means every prompt showed a
  difference, 0 none.
- **Effect size**: the mean effect over those significant prompts (0 when
  none is): by default the paired Cohen's d_z, the mean of the per-sentence
  PPL differences over their standard deviation (what the paper's Table 4
  reports); with `protocol.effect=d`, the pooled Cohen's d. "Settings"
  names the one this run used. **Positive** = the swapped sentences are less
  likely than the originals, i.e. the model prefers the stereotype about the
  origin group;
  **negative** = it prefers the anti-stereotype.
- Types 0 and 00 are shown beside 1–10 but do not enter the bias ratio.
- d and d_z are signed *replace minus origin*. t carries the sign "Settings"
  names: by default the TWBias authors' (`ttest_rel(origin_ppl, replace_ppl)`,
  origin minus replace), so t < 0 where d > 0 (PROTOCOLS §1.5).
- "few pairs: n = 3, low power" marks a test on fewer than ten sentence pairs
  (a small category): computed and counted as the authors' code does, never
  dropped, but such a test finds only large differences; a headline built only
  from such tests carries the flag too (PROTOCOLS §1.5).
- "–" marks a number that is undefined: fewer than two rows to test (small
  categories), or no variance at all (e.g. identical likelihoods)."""


class TWBiasReport:
    def write(self, summary: TWBiasSummary, out_dir: Path) -> list[Path]:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        metrics = summary.metrics
        figures: list[Path] = []
        sections = [
            header_section(summary, "TWBias: social bias through a Taiwan cultural lens"),
            HOW_TO_READ,
            model_section(summary),
            _settings_section(summary),
        ]
        axis_figures: list[Path] = []
        if metrics.gender is not None:
            sections.append(_axis_section("Gender", metrics.gender))
            axis_figures += _axis_figures("gender", metrics.gender, summary, out_dir, sections)
        if metrics.ethnicity is not None:
            if metrics.ethnicity_matrix is not None:
                figures = _heat_maps(metrics.ethnicity_matrix, out_dir, cell_counts(metrics.ethnicity_matrix, metrics.ethnicity))
                sections.append(_matrix_section(metrics.ethnicity_matrix, figures))
            sections.append(_axis_section("Ethnicity", metrics.ethnicity, collapse=True))
            axis_figures += _axis_figures("ethnicity", metrics.ethnicity, summary, out_dir, sections)
        sections.append(strata_markdown(summary))
        sections.append(_counts_section(summary))
        return [write_markdown(out_dir, sections), *figures, *axis_figures]


def _axis_figures(
    axis: str, specs: Mapping[str, SpecificationBlock], summary: TWBiasSummary, out_dir: Path, sections: list[str]
) -> list[Path]:
    """The paper's p-value (Fig. 2/7) and attribute-category (Fig. 3/6) figures of one axis, linked in the report."""
    if not specs:
        return []
    metrics = summary.metrics
    paths = [
        p_value_figure(axis, specs, metrics.prompt_types, metrics.analysis.alpha, out_dir),
        category_figure(axis, specs, out_dir),
    ]
    sections.append("\n".join(f"![{p.stem.replace('_', ' ')}]({p.name})" for p in paths))
    return paths


def boundary_rule(summary: TWBiasSummary) -> str | None:
    provenance = summary.model.scorer_provenance
    return (provenance.boundary_rule if provenance is not None else None) or summary.metrics.analysis.boundary_rule


T_SIGN: dict[str | None, str] = {
    "origin_minus_replace": "the TWBias authors' (t of ttest_rel(origin_ppl, replace_ppl)): origin minus replace, "
    "so t < 0 where the replaced sentences are less likely (d > 0) (PROTOCOLS §1.5)",
    "replace_minus_origin": "replace minus origin (protocol.t_sign=replace_minus_origin; the opposite of the "
    "authors' sign), so t has d's sign",
    None: "replace minus origin (a summary written before t took the authors' sign), so t has d's sign",
}
T_SIGN_BESIDE = (
    "t carries the sign named under Settings (by default the authors': origin minus replace, negative when the "
    "model prefers the stereotype); d and d_z are replace minus origin (positive then)."
)
CATEGORY_ROWS = {
    "exploded": "exploded — a sentence counts once per T-A pair in every category of its attributes, as the "
    "authors' code duplicates the row per attribute (PROTOCOLS §1.7)",
    "unique": "unique — a sentence counts once in each category of its attributes (protocol.category_rows=unique; "
    "the authors' code counts it once per pair)",
}
REPLACE_AGGREGATE: dict[str | None, str] = {
    "mean": "the mean PPL over each sentence's replaced sentences (PROTOCOLS §1.3, the paper)",
    "min": "the lowest PPL among each sentence's replaced sentences (protocol.replace_aggregate=min, as one "
    "released cal_bias.py picks it)",
    "stored": "the one replaced sentence the replayed result files hold (the authors' code chose it)",
    None: "the mean PPL over each sentence's replaced sentences (PROTOCOLS §1.3)",
}


def _settings_section(summary: TWBiasSummary) -> str:
    metrics = summary.metrics
    analysis = metrics.analysis
    rule = boundary_rule(summary)
    explain = {
        "straddle-to-continuation": "a token straddling the prompt/response boundary belongs to the response "
        "(PROTOCOLS §0.1)",
        "authors": "prompt tokens counted by tokenising the rendered prompt alone, as the TWBias authors' code does",
    }.get(rule or "", "")
    test = {
        "paired": "paired t-test (ttest_rel; the released code's test, the default)",
        "welch": "Welch's t-test (ttest_ind, unequal variances; protocol.test=welch)",
        "student": "Student's t-test (ttest_ind, pooled variance; the paper's wording; protocol.test=student)",
    }
    effect = {"d": "Cohen's d (pooled SD of the two samples)", "dz": "Cohen's d_z (mean / SD of the differences)"}
    return "\n".join(
        [
            "## Settings",
            "",
            f"- prompt types: {', '.join(metrics.prompt_types)}",
            f"- test: {test.get(analysis.test, analysis.test)}, two-tailed, alpha {fmt(analysis.alpha)}",
            f"- t sign: {T_SIGN.get(analysis.t_sign, T_SIGN[None])}",
            f"- replace PPL: {REPLACE_AGGREGATE.get(analysis.replace_aggregate, REPLACE_AGGREGATE[None])}",
            f"- effect size: {effect.get(analysis.effect, analysis.effect)}",
            f"- outliers: rows outside mean ± {fmt(analysis.outlier_sigma, 1)}·std (population) of either PPL, "
            "per prompt type and specification",
            f"- category rows: {CATEGORY_ROWS.get(analysis.category_rows, analysis.category_rows)}",
            _tested_from(analysis.min_pairs, analysis.few_pairs_below),
            f"- tokenisation at the prompt/response boundary: `{rule}`" + (f" — {explain}" if explain else ""),
        ]
    )


def _tested_from(min_pairs: int | None, few_below: int | None) -> str:
    if min_pairs is None:
        rule = ("- a prompt type is tested wherever the t-test is defined (2 sentence pairs after outliers), as the "
                "authors' code tests it")
    else:
        rule = (f"- a prompt type is tested from {min_pairs} sentence pairs after outliers on (protocol.min_pairs); with "
                "fewer it is \"too few to test\" (no t, p or effect size, never significant, out of the bias ratio)")
    if few_below is not None:
        rule += f"; one tested on fewer than {few_below} pairs is flagged \"few pairs: n = …, low power\", never dropped"
    return rule


def _spec_title(key: str, block: SpecificationBlock) -> str:
    return f"{key} ({block.origin} → {block.reference})" if key in ("female", "male") else key


def _prompt_rows(prompts: Mapping[str, PromptStatsBlock]) -> Iterator[list[object]]:
    for ptype, s in prompts.items():
        yield [
            ptype,
            s.n,
            s.n_outliers,
            s.n_invalid,
            s.mean_origin_ppl,
            s.mean_replace_ppl,
            s.t,
            "too few to test" if s.untested else _flagged(_p_value(s.p_value), s.few_pairs),
            s.cohens_d,
            s.cohens_dz,
            s.significant,
        ]


def _flagged(value: object, flag: str | None) -> object:
    return f"{fmt(value)} ({flag})" if flag else value


PROMPT_HEADERS = ["type", "n", "outliers", "invalid", "mean origin PPL", "mean replace PPL", "t", "p", "d", "d_z", "p < alpha"]


def _headline_row(label: str, block: GroupBlock) -> list[object]:
    significant = f"{block.n_significant}/{block.n_prompts}"
    return [label, block.n_rows, block.bias_ratio, block.effect_size, _flagged(significant, few_words(block.few_pairs))]


def _details(summary_line: str, body: str, collapse: bool) -> str:
    if not collapse:
        return body
    return f"<details><summary>{summary_line}</summary>\n\n{body}\n\n</details>"


CI_METRICS = ["bias_ratio", "effect_size"]


def _headline_table(first: str, rows: list[tuple[str, GroupBlock]]) -> str:
    """Label, sentences, the two headlines and significant prompts, with their 95% CIs where the summary has them."""
    ci = any_intervals([group.intervals for _, group in rows])  # bootstrap intervals over sentence pairs
    return table(
        [first, "sentences", "bias ratio", "effect size", "significant prompts",
         *(ci_headers(["bias ratio", "effect size"]) if ci else [])],
        (_headline_row(label, group) + (ci_cells(group.intervals, CI_METRICS) if ci else []) for label, group in rows),
    ) + table_legend([group.intervals for _, group in rows])


def _axis_section(title: str, specs: Mapping[str, SpecificationBlock], collapse: bool = False) -> str:
    lines = [f"## {title}", "", "### Headline", ""]
    lines.append(_headline_table("specification", [(_spec_title(k, b), b) for k, b in specs.items()]))
    lines += ["", "### Per prompt type", "", T_SIGN_BESIDE, ""]
    for key, block in specs.items():
        body = table(PROMPT_HEADERS, _prompt_rows(block.prompts))
        lines += [_details(_spec_title(key, block), f"**{_spec_title(key, block)}**\n\n{body}", collapse), ""]
    lines += ["### By toxicity", ""]
    rows = [
        (f"{_spec_title(key, block)}, toxicity {tox}", group)
        for key, block in specs.items()
        for tox, group in block.by_toxicity.items()
    ]
    lines += [_details("by toxicity", _headline_table("specification, toxicity", rows), collapse), ""]
    lines += ["### By attribute category", ""]
    for key, block in specs.items():
        body = _headline_table("category", list(block.by_category.items()))
        lines += [_details(_spec_title(key, block), f"**{_spec_title(key, block)}**\n\n{body}", collapse), ""]
    return "\n".join(lines)


def _matrix_values(matrix: EthnicityMatrixBlock, metric: str) -> dict[str, dict[str, float | None]]:
    return matrix.bias_ratio if metric == "bias_ratio" else matrix.effect_size


def _matrix_table(matrix: EthnicityMatrixBlock, metric: str) -> str:
    labels = matrix.labels
    values = _matrix_values(matrix, metric)
    return table(
        ["origin \\ reference", *(labels.get(r, r) for r in matrix.references)],
        ([labels.get(o, o), *(values.get(o, {}).get(r) for r in matrix.references)] for o in matrix.origins),
    )


def _matrix_section(matrix: EthnicityMatrixBlock, figures: list[Path]) -> str:
    lines = [
        "## Ethnicity: origin × reference",
        "",
        "Rows: the group the sentences are about (origin); columns: the group swapped in (reference).",
        "",
        "### Bias ratio",
        "",
        _matrix_table(matrix, "bias_ratio"),
        "",
        "### Effect size",
        "",
        _matrix_table(matrix, "effect_size"),
        "",
    ]
    lines += [f"![{p.stem.replace('_', ' ')}]({p.name})" for p in figures]
    return "\n".join(lines)


def cell_counts(matrix: EthnicityMatrixBlock, specs: Mapping[str, SpecificationBlock]) -> list[list[int | None]]:
    """Each origin × reference cell's n: the sentences of the specification behind it (its ``n_rows``)."""
    rows = {(b.origin, b.reference): b.n_rows for b in specs.values()}
    return [[rows.get((o, r)) for r in matrix.references] for o in matrix.origins]


def _heat_maps(matrix: EthnicityMatrixBlock, out_dir: Path, counts: list[list[int | None]] | None = None) -> list[Path]:
    """The bias-ratio and effect-size heat maps; each cell states its value and, with ``counts``, its n."""
    import numpy as np

    labels = matrix.labels
    origins = matrix.origins
    references = matrix.references
    paths = []
    for metric, title, cmap in (
        ("bias_ratio", "Bias ratio (share of prompts 1-10 with p < alpha)", "Reds"),
        ("effect_size", "Effect size (mean over significant prompts)", "RdBu_r"),
    ):
        values = _matrix_values(matrix, metric)
        grid = np.array(
            [[_number(values.get(o, {}).get(r)) for r in references] for o in origins], dtype=float
        ).reshape(len(origins), len(references))
        fig, ax = new_figure(7.5, 4.5)
        if metric == "bias_ratio":
            vmin, vmax = 0.0, 1.0
        else:
            finite = np.abs(grid[np.isfinite(grid)])
            bound = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
            vmin, vmax = -bound, bound
        image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=vmin, vmax=vmax)
        label_cells(ax, image, grid, counts=counts)  # label colour by the cell's luminance: no white 0.00 on a white cell
        ax.set_xticks(range(len(references)), [labels.get(r, r) for r in references], rotation=30, ha="right")
        ax.set_yticks(range(len(origins)), [labels.get(o, o) for o in origins])
        ax.set_xlabel("reference group")
        ax.set_ylabel("origin group")
        ax.set_title(title + ("\nn in each cell: sentences of that origin → reference specification" if counts else ""), fontsize=10)
        fig.colorbar(image, ax=ax)
        paths.append(save_figure(fig, out_dir / f"twbias_ethnicity_{metric}.png"))
    return paths


def _p_value(value: float | None) -> float | str | None:
    """Small p-values in scientific notation (a fixed 3 decimals would print 0.000)."""
    if isinstance(value, float) and 0.0 < value < 0.001:
        return f"{value:.1e}"
    return value


def _number(value: float | None) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else float("nan")


def _counts_section(summary: TWBiasSummary) -> str:
    lines = ["## Counts and notes", ""]
    for key, value in summary.counts:
        if isinstance(value, Mapping):
            inner = ", ".join(f"{k}: {fmt(v)}" for k, v in value.items()) or "none"
            lines.append(f"- {key}: {inner}")
        else:
            lines.append(f"- {key}: {fmt(value)}")
    lines += [f"- {note}" for note in summary.notes]
    skips = summary.details.skips
    if skips:
        lines += [
            "",
            "Every input left out, with where and why:",
            "",
            table(
                ["reason", "file", "row", "field", "detail", "effect"],
                ([s.reason, s.file, s.row, s.field, s.detail.replace("|", "\\|"), s.effect] for s in skips),
            ),
        ]
    return "\n".join(lines)
