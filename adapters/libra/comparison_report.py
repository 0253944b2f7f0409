"""LIBRA comparison sections: the paper's Table 1 columns per model (and its theoretical LMs), overall and per category."""

from __future__ import annotations

from pathlib import Path

from culturebias.adapters.reports.comparison_intervals import LIBRA_METRICS, overall_interval_figures
from culturebias.adapters.reports.intervals import any_intervals, ci_cells, ci_headers, table_legend
from culturebias.adapters.reports.markdown import table
from culturebias.domain.libra.comparison import LibraComparison
from culturebias.domain.libra.summary import LibraScoresBlock, TheoreticalRow

HEADERS = ["LMS", "SS", "local iCAT", "JSD", "BBS", "EiCAT", "valid", "invalid"]
OVERALL_HEADERS = ["LMS", "SS", "local iCAT", "StereoSet iCAT", "JSD", "BBS", "EiCAT", "valid", "invalid"]
CI_METRICS = ("icat_local", "eicat")


def row(scores: LibraScoresBlock) -> list[object]:
    return [scores.lms, scores.ss, scores.icat_local, scores.jsd, scores.bbs, scores.eicat, scores.valid, scores.invalid]


def overall_row(scores: LibraScoresBlock, stereoset_icat: float | None) -> list[object]:
    """A model's overall row with the paper's iCAT column (StereoSet's) after the local one."""
    cells = row(scores)
    return [*cells[:3], stereoset_icat, *cells[3:]]


def theoretical_row(model: TheoreticalRow, ci: bool) -> list[object]:
    """Table 1's theoretical LM: its iCAT in both iCAT columns (no triplets, no interval)."""
    cells = [model.lms, model.ss, model.icat, model.icat, model.jsd, model.bbs, model.eicat, "–", "–"]
    return [model.name, "theoretical", *cells, *(["–"] * len(ci_headers(CI_METRICS)) if ci else [])]


def libra_sections(comparison: LibraComparison, _out_dir: Path) -> tuple[list[str], list[Path]]:
    body = comparison.body
    ci = any_intervals([s.intervals for s in body.overall.values()])  # the runs' bootstrap intervals over triplets
    overall = [[model, body.model_type[model], *overall_row(scores, body.stereoset_icat.get(model)),
                *(ci_cells(scores.intervals, CI_METRICS) if ci else [])]
               for model, scores in body.overall.items()]
    overall += [theoretical_row(model, ci) for model in body.reference_rows]
    sections = [
        "## Table 1 columns per model\n\nAll scores 0–100. \"local iCAT\" is computed on the local triplets; "
        "\"StereoSet iCAT\" is the paper's iCAT column, on StereoSet (empty for a run whose data folder held no "
        "StereoSet file). The theoretical rows are Table 1's reference models, computed with the same formulas.\n\n"
        + table(["model", "type", *OVERALL_HEADERS, *(ci_headers(["local iCAT", "EiCAT"]) if ci else [])], overall, digits=2)
        + table_legend([s.intervals for s in body.overall.values()])
    ]
    per_category = ["## Per category"]
    for category, models in body.by_category.items():
        rows = [[model, *row(scores)] for model, scores in models.items()]
        per_category += ["", f"### {category}", "", table(["model", *HEADERS], rows, digits=2)]
    sections.append("\n".join(per_category))
    bars = overall_interval_figures(
        comparison, Path(_out_dir), comparison.body.overall, LIBRA_METRICS, "LIBRA scores (95% CI over triplets)", "score (0–100)"
    )  # per-model bars with 95% CIs, where the runs have them
    sections += [f"![LIBRA scores per model with 95% CIs]({path.name})" for path in bars]
    return sections, bars
