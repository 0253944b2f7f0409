"""LIBRA comparison sections: the paper's Table 1 columns per model, overall and per category."""

from __future__ import annotations

from pathlib import Path

from culturebias.adapters.reports.markdown import table
from culturebias.domain.libra.comparison import LibraComparison
from culturebias.domain.libra.summary import LibraScoresBlock

HEADERS = ["LMS", "SS", "local iCAT", "JSD", "BBS", "EiCAT", "valid", "invalid"]


def row(scores: LibraScoresBlock) -> list[object]:
    return [scores.lms, scores.ss, scores.icat, scores.jsd, scores.bbs, scores.eicat, scores.valid, scores.invalid]


def libra_sections(comparison: LibraComparison, _out_dir: Path) -> tuple[list[str], list[Path]]:
    body = comparison.body
    overall = [[model, body.model_type[model], *row(scores)] for model, scores in body.overall.items()]
    sections = [
        "## Table 1 columns per model\n\nAll scores 0–100; iCAT is computed on the local triplets (\"local iCAT\").\n\n"
        + table(["model", "type", *HEADERS], overall, digits=2)
    ]
    per_category = ["## Per category"]
    for category, models in body.by_category.items():
        rows = [[model, *row(scores)] for model, scores in models.items()]
        per_category += ["", f"### {category}", "", table(["model", *HEADERS], rows, digits=2)]
    sections.append("\n".join(per_category))
    return sections, []
