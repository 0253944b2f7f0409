"""comparison.html: one self-contained page per comparison, every number from the typed comparison.

The figures are the PNGs the Markdown comparison report drew, embedded. Where the compared runs'
audit records are at hand, a row keyed by a model (or model / category) opens that run's items.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from culturebias.adapters.reports.html.drilldown import Drill, as_record, items_data
from culturebias.adapters.reports.html.comparison_card import comparison_card
from culturebias.adapters.reports.html.page import disclosure, figure, page, text
from culturebias.adapters.reports.html.comparison_tables import comparison_view
from culturebias.adapters.reports.html.verdict import comparison_verdict_sections
from culturebias.adapters.reports.words import title_words
from culturebias.domain.comparison.envelope import Comparison

REPORT_FILE = "comparison.html"
# run id → that run's audit records; None where they cannot be read
RunItems = Callable[[str], Sequence[Any] | None]  # Any: ItemRecords or their JSON


def runs_table(comparison: Comparison[Any]) -> str:  # Any: a comparison of any benchmark
    head = "".join(f"<th>{h}</th>" for h in ("model", "run", "model ports", "data", "items", "measured", "schema", "finished"))
    rows = "".join(
        f'<tr><th scope="row">{text(run.label)}</th><td>{text(run.run_id)}</td>'
        f"<td>{text(', '.join(f'{role} {model}' for role, model in run.models.items()) or '–')}</td>"
        f"<td>{text(run.data_fingerprint)}</td>"
        f"<td>{text(run.items_text())}</td>"
        f"<td>{text('yes' if run.not_measured is None else f'not measured: {run.not_measured}')}</td>"
        f"<td>{text(run.schema_version)}</td><td>{text(run.finished_at)}</td></tr>"
        for run in comparison.runs
    )
    return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def caveats_section(comparison: Comparison[Any]) -> str:  # Any: a comparison of any benchmark
    """Each run's caveats (domain/caveats.py) as a short list under its label; '' when no run has any."""
    found = comparison.caveats()
    if not found:
        return ""
    runs = "".join(
        f'<li><strong>{text(label)}</strong><ul>{"".join(f"<li>{text(c.text)}</li>" for c in caveats)}</ul></li>'
        for label, caveats in found.items()
    )
    return f'<section class="card" id="caveats" aria-label="caveats"><h2>Caveats</h2><ul class="warnings">{runs}</ul></section>'


def banner_text(comparison: Comparison[Any]) -> str:  # Any: a comparison of any benchmark
    if len(comparison.data_fingerprints) <= 1:
        return f"data fingerprint {comparison.data_fingerprints[0]} (the same for every run)"
    return "data fingerprints " + ", ".join(comparison.data_fingerprints)


def banner(comparison: Comparison[Any]) -> str:  # Any: a comparison of any benchmark
    unmeasured = "".join(
        f'<p class="banner"><strong>{text(label)}: not measured.</strong> {text(why)}. Its numbers are null, never a bar at 0.</p>'
        for label, why in comparison.not_measured().items()
    )
    return unmeasured + _data_banner(comparison)


def _data_banner(comparison: Comparison[Any]) -> str:  # Any: a comparison of any benchmark
    if len(comparison.data_fingerprints) <= 1:
        return f'<p class="muted">{text(banner_text(comparison))}</p>'
    return (
        '<p class="banner"><strong>Runs on different data.</strong> The data fingerprints differ ('
        + ", ".join(text(f) for f in comparison.data_fingerprints)
        + "); they are compared because a data mismatch was allowed (--allow-data-mismatch). "
        "Differences between models may be differences between data versions.</p>"
    )


def comparison_drill(comparison: Comparison[Any], items: RunItems | None) -> Drill | None:  # Any: a comparison of any benchmark
    if items is None:
        return None
    records = []
    for run in comparison.runs:
        for item in items(run.run_id) or ():
            records.append({"run": run.label, **as_record(item)})
    return Drill(records, known=[run.label for run in comparison.runs])


VIEW_CAPTION = (
    "The {view} view of the comparison: a row per metric and a column per model; a value's interval follows it "
    "in brackets, with how it was computed in small print; click a column heading to sort."
)


def body_sections(comparison: Comparison[Any], drill: Drill | None) -> list[str]:  # Any: a comparison of any benchmark
    """Each view of the benchmark's comparison body behind its own disclosure."""
    body = comparison.body.model_dump(mode="json")
    sections = []
    for key, value in body.items():
        shown = comparison_view(key, value, comparison.labels(), drill, level=3)
        caption = VIEW_CAPTION if 'class="sortable metrics"' in shown else "The {view} view of the comparison."
        sections.append(disclosure(title_words(key), caption.format(view=title_words(key)), shown))
    return sections


def comparison_page(
    comparison: Comparison[Any],  # Any: a comparison of any benchmark
    figures: Sequence[Path] = (),
    items: RunItems | None = None,
    benchmark_title: str | None = None,
    verdict: str = "",
    language: str | None = None,
) -> str:
    """The page: a policy verdict where one was checked, the comparison card, the figures, then the details."""
    name = benchmark_title or comparison.benchmark
    title = f"{name} comparison: {' vs '.join(comparison.labels())}"
    notes = "".join(f"<li>{text(n)}</li>" for n in comparison.notes)
    embedded = "".join(figure(p) for p in figures)
    drill = comparison_drill(comparison, items)
    body = [
        f"<h1>{text(title)}</h1>",
        verdict,
        banner(comparison) if len(comparison.data_fingerprints) > 1 else "",
        comparison_card(comparison, name),
        caveats_section(comparison),
        f"<section><h2>Figures</h2>{embedded}</section>" if embedded else "",
        *body_sections(comparison, drill),
        disclosure("Runs", "Which run each model's numbers come from, on which data and how much of it.", runs_table(comparison)),
        disclosure("Notes", "What the comparison noticed about the runs it compared.", f"<ul>{notes}</ul>" if notes else ""),
        f'<p class="muted">created {text(comparison.created_at)}; comparison schema {text(comparison.schema_version)}; '
        f"{text(banner_text(comparison))}</p>",
        items_data(drill),  # last: the rows above chose what it embeds
    ]
    return page(title, "\n".join(b for b in body if b), language)


class HtmlComparisonReport:
    """Writes comparison.html; ``items`` gives a compared run's audit records for the drill-down."""

    def __init__(
        self,
        items: RunItems | None = None,
        title: str | None = None,
        language: str | None = None,
        verdict: str = "",
        verdicts: Sequence[Any] = (),  # Any: PolicyVerdicts of `culturebias check` on the compared runs
    ):
        self.items = items
        self.title = title
        self.language = language
        self.verdict = verdict
        self.verdicts = verdicts

    def write(self, comparison: Comparison[Any], out_dir: Path, figures: Sequence[Path] = ()) -> list[Path]:  # Any: a comparison of any benchmark
        path = Path(out_dir) / REPORT_FILE
        verdict = self.verdict or comparison_verdict_sections(self.verdicts, comparison)
        path.write_text(comparison_page(comparison, figures, self.items, self.title, verdict, self.language), encoding="utf-8")
        return [path]
