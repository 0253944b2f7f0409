"""Shared pieces of the Markdown reports. Every number shown comes from summary.json."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable, Sequence

from culturebias.adapters.reports.repeats_section import repeats_lines
from culturebias.adapters.reports.sample_words import sample_sentence
from culturebias.domain.caveats import SMALL_MODEL_PARAMETERS, run_caveats
from culturebias.domain.summary import RunSummary
from culturebias.domain.validity import VALIDITY_OFF_NOTE, rule_reason



def fmt(value: object, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        return f"{value:.{digits}f}"
    return str(value)


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], digits: int = 3) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(fmt(cell, digits) for cell in row) + " |")
    return "\n".join(lines)


def model_section(summary: RunSummary) -> str:
    """Which model ran, on which backend, and a plain warning when it is a small one."""
    roles = summary.model.roles()
    lines = ["## Model", ""]
    if not roles:
        lines.append("No model port was used by this run.")
    small = False
    for role, identity in roles.items():
        params = identity.parameters
        size = f", {params / 1e6:.0f}M parameters" if params else ""
        desc = f" ({identity.description})" if identity.description else ""
        lines.append(f"- **{role}**: `{identity.model}` via `{identity.backend}`, dtype {identity.dtype}{size}{desc}")
        provenance = summary.model.provenance(role)
        if provenance is not None:
            lines.append(
                f"  - scores computed on {provenance.device} with batch size {provenance.batch_size}, "
                f"padding {provenance.padding_side}, boundary rule `{provenance.boundary_rule}`"
            )
        if params and params < SMALL_MODEL_PARAMETERS:
            small = True
    if summary.model.chat_template is not None:
        lines.append(f"- **chat template**: {summary.model.chat_template.describe()}")
    if small:
        lines += [
            "",
            "> **A small model ran.** A model of this size checks that the method works end to end; "
            "its numbers say nothing about the bias of a deployable model.",
        ]
    return "\n".join(lines)


def header_section(summary: RunSummary, title: str) -> str:
    return "\n".join(
        [
            f"# {title}",
            "",
            *limit_banner(summary),
            *not_measured_banner(summary),
            *sample_banner(summary),
            *caveats_banner(summary),
            f"- run `{summary.run_id}`, finished {summary.finished_at}",
            f"- data: {summary.data.source} (fingerprint `{summary.data.fingerprint}`)",
            f"- culturebias {summary.culturebias_version}, summary schema {summary.schema_version}",
            *repeats_lines(summary),
        ]
    )


def limit_banner(summary: RunSummary) -> list[str]:
    """A run cut short by --limit says so before any number is read."""
    if summary.limit is None:
        return []
    return [
        f"> **A limited run: not comparable to a full one.** `--limit {summary.limit.n}` evaluated only "
        f"{summary.limit.meaning.replace(' N ', f' {summary.limit.n} ', 1)}: the first N, not a representative "
        "sample (`--sample N` draws one stratified by the benchmark's design cells).",
        "",
    ]


def not_measured_banner(summary: RunSummary) -> list[str]:
    """A run whose headline cannot be read says so, and why, before any number is read."""
    if summary.not_measured is None:
        return validity_banner(summary)
    return [f"> **Not measured.** {summary.not_measured}. The headline numbers are null, not zero.", ""]


# The kinds the banners above (and the model section) already say, each in its own words.
BANNERED = ("limited", "sampled", "not_measured", "small_model", "validity")


def caveats_banner(summary: RunSummary) -> list[str]:
    """The run's other caveats (domain/caveats.py: a judge given up, a mode other than the paper's), one line each."""
    found = [c for c in run_caveats(summary) if c.kind not in BANNERED]
    return [line for c in found for line in (f"> **Caveat.** {c.text}", "")]


def validity_banner(summary: RunSummary) -> list[str]:
    """Headlines a failed validity rule leaves not measured (PROTOCOLS §6), or the rules switched off."""
    block = summary.validity
    if block is None:
        return []
    if not block.enabled:
        return [f"> **{VALIDITY_OFF_NOTE[:1].upper()}{VALIDITY_OFF_NOTE[1:]}.**", ""]
    failed = block.failed()
    if not failed:
        return []
    guarded = ", ".join(sorted({m for r in failed for m in r.guards}))
    reasons = "; ".join(rule_reason(r) for r in failed)
    return [f"> **Not measured: {guarded}.** {reasons}. Their values stay in summary.json but are not results "
            "(validity rules, PROTOCOLS §6).", ""]


def sample_banner(summary: RunSummary) -> list[str]:
    """A run on a --sample says what it evaluated, in one sentence, before any number is read (its strata: ``strata_markdown``)."""
    sample = summary.sample
    if sample is None:
        return []
    return [f"> **{sample_sentence(sample)}**", ""]


def notes_section(summary: RunSummary) -> str:
    lines = ["## Counts and notes", ""]
    for key, value in summary.counts.model_dump(mode="json").items():
        lines.append(f"- {key}: {fmt(value)}")
    lines += [f"- {note}" for note in summary.notes]
    return "\n".join(lines)


def write_markdown(out_dir: Path, sections: Sequence[str], name: str = "report.md") -> Path:
    path = Path(out_dir) / name
    path.write_text("\n\n".join(s.strip() for s in sections if s) + "\n", encoding="utf-8")
    return path


def new_figure(width: float = 6.0, height: float = 4.0):
    """A matplotlib figure on the headless Agg backend (imported lazily)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from culturebias.adapters.reports.fonts import use_script_fonts

    use_script_fonts()
    return plt.subplots(figsize=(width, height))


def save_figure(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
