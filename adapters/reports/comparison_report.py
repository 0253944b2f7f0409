"""comparison.md: the compared runs, the notes, and the benchmark's cross-model views (every number from comparison.json)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from culturebias.adapters.reports.comparison_verdicts import verdict_markdown
from culturebias.adapters.reports.comparison_words import answer_section
from culturebias.adapters.reports.headline_sections import headline_sections
from culturebias.adapters.reports.markdown import table, write_markdown
from culturebias.domain.comparison.envelope import Comparison
from culturebias.domain.policy.verdict import PolicyVerdict

REPORT_FILE = "comparison.md"
# (comparison, out_dir) → (Markdown sections, figures written): a benchmark's cross-model views
Sections = Callable[[Any, Path], tuple[list[str], list[Path]]]  # Any: the benchmark's own Comparison type


def header(comparison: Comparison[Any], title: str) -> str:  # Any: a comparison of any benchmark
    lines = [
        f"# {title}: {len(comparison.runs)} runs compared",
        "",
        f"- created {comparison.created_at}; comparison schema {comparison.schema_version}",
    ]
    if len(comparison.data_fingerprints) > 1:
        lines += [
            "",
            "> **Runs on different data.** The data fingerprints differ ("
            + ", ".join(f"`{f}`" for f in comparison.data_fingerprints)
            + "); they are compared because a data mismatch was allowed (`--allow-data-mismatch`). "
            "Differences between models may be differences between data versions.",
        ]
    else:
        lines.append(f"- data fingerprint `{comparison.data_fingerprints[0]}` (the same for every run)")
    return "\n".join(lines)


def runs_section(comparison: Comparison[Any]) -> str:  # Any: a comparison of any benchmark
    rows = [
        [
            run.label,
            f"`{run.run_id}`",
            ", ".join(f"{role} `{model}`" for role, model in run.models.items()) or "–",
            f"`{run.data_fingerprint}`",
            run.items_text(),
            "yes" if run.not_measured is None else f"**not measured**: {run.not_measured}",
            run.schema_version,
            run.finished_at,
        ]
        for run in comparison.runs
    ]
    headers = ["model", "run", "model ports", "data", "items", "measured", "schema", "finished"]
    return "## Runs\n\n" + table(headers, rows) + caveats_lines(comparison)


def caveats_lines(comparison: Comparison[Any]) -> str:  # Any: a comparison of any benchmark
    """Each run's caveats (domain/caveats.py) under the runs table; '' when no run has any."""
    found = comparison.caveats()
    if not found:
        return ""
    lines = ["", "", "### Caveats", ""]
    for label, caveats in found.items():
        lines += [f"- **{label}**", *(f"  - {c.text}" for c in caveats)]
    return "\n".join(lines)


def not_measured_banner(comparison: Comparison[Any]) -> str:  # Any: a comparison of any benchmark
    """Runs whose headline cannot be read are named before any table: their cells are null, never 0."""
    missing = comparison.not_measured()
    if not missing:
        return ""
    return "\n".join(
        f"> **{label}: not measured.** {why}. Its numbers are null: tables show \"–\" and figures \"not measured\", "
        "never a bar at 0." for label, why in missing.items()
    )


def notes_section(comparison: Comparison[Any]) -> str:  # Any: a comparison of any benchmark
    if not comparison.notes:
        return ""
    return "## Notes\n\n" + "\n".join(f"- {note}" for note in comparison.notes)


class ComparisonReport:
    """Writes comparison.md (and its figures) from a typed comparison: the benchmark's title and
    sections are its descriptor's (headline table and bars where it declares no views of its own)."""

    def __init__(
        self,
        title: str | None = None,
        sections: Sections = headline_sections,
        verdicts: Sequence[PolicyVerdict] = (),  # of `culturebias check` on the compared runs: the report opens with them
    ):
        self.title = title
        self.sections = sections
        self.verdicts = verdicts

    def write(self, comparison: Comparison[Any], out_dir: Path) -> list[Path]:  # Any: a comparison of any benchmark
        out_dir = Path(out_dir)
        sections, figures = self.sections(comparison, out_dir)
        title, rest = header(comparison, self.title or comparison.benchmark).split("\n\n", 1)
        parts = [
            title,
            verdict_markdown(self.verdicts, comparison),
            rest,
            not_measured_banner(comparison),
            answer_section(comparison),
            runs_section(comparison),
            notes_section(comparison),
            *sections,
        ]
        path = write_markdown(out_dir, parts, REPORT_FILE)
        return [path, *figures]
