"""comparison.md: the compared runs, the notes, and the benchmark's cross-model views (every number from comparison.json)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from culturebias.adapters.reports.comparison_bbq import cbbq_sections, kobbq_sections
from culturebias.adapters.reports.comparison_libra import libra_sections
from culturebias.adapters.reports.comparison_mcbe import mcbe_sections
from culturebias.adapters.reports.comparison_twbias import twbias_sections
from culturebias.adapters.reports.markdown import table, write_markdown
from culturebias.domain.comparison.envelope import Comparison

REPORT_FILE = "comparison.md"
TITLES = {"twbias": "TWBias", "kobbq": "KoBBQ", "cbbq": "CBBQ", "mcbe": "McBE", "libra": "LIBRA"}
# benchmark → (comparison, out_dir) → (Markdown sections, figures written)
Sections = Callable[[Any, Path], tuple[list[str], list[Path]]]
SECTIONS: dict[str, Sections] = {
    "twbias": twbias_sections,
    "kobbq": kobbq_sections,
    "cbbq": cbbq_sections,
    "mcbe": mcbe_sections,
    "libra": libra_sections,
}


def header(comparison: Comparison[Any]) -> str:
    title = TITLES.get(comparison.benchmark, comparison.benchmark)
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


def runs_section(comparison: Comparison[Any]) -> str:
    rows = [
        [
            run.label,
            f"`{run.run_id}`",
            ", ".join(f"{role} `{model}`" for role, model in run.models.items()) or "–",
            f"`{run.data_fingerprint}`",
            "all" if run.limit is None else f"first {run.limit} (--limit)",
            run.schema_version,
            run.finished_at,
        ]
        for run in comparison.runs
    ]
    return "## Runs\n\n" + table(["model", "run", "model ports", "data", "items", "schema", "finished"], rows)


def notes_section(comparison: Comparison[Any]) -> str:
    if not comparison.notes:
        return ""
    return "## Notes\n\n" + "\n".join(f"- {note}" for note in comparison.notes)


class ComparisonReport:
    """Writes comparison.md (and its figures) from a typed comparison."""

    def write(self, comparison: Comparison[Any], out_dir: Path) -> list[Path]:
        out_dir = Path(out_dir)
        sections, figures = SECTIONS[comparison.benchmark](comparison, out_dir)
        path = write_markdown(out_dir, [header(comparison), runs_section(comparison), notes_section(comparison), *sections], REPORT_FILE)
        return [path, *figures]
