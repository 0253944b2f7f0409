"""report.html: one self-contained page per run, from the typed summary and the run's audit records.

Every number is read from the typed summary; the figures are the PNGs the Markdown report drew
from it, embedded. Each breakdown row opens the items behind it (at most ``CAP`` embedded).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from culturebias.adapters.reports.html.drilldown import Drill, items_data, items_table
from culturebias.adapters.reports.html.headline_card import headline_card
from culturebias.adapters.reports.html.markdown_sections import paper_sections
from culturebias.adapters.reports.html.measures import fold
from culturebias.adapters.reports.html.page import disclosure, figure, page, text
from culturebias.adapters.reports.html.tree import kv_table, render_block
from culturebias.adapters.reports.words import prose
from culturebias.adapters.reports.sample_words import has_strata, strata_caption, strata_table_html
from culturebias.domain.comparison.envelope import main_model
from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.summary import RunSummary

REPORT_FILE = "report.html"
# run id → the run's audit records (ItemRecord objects or their JSON); None where a run kept none
ItemSource = Callable[[str], Sequence[Any] | None]  # Any: ItemRecords or their JSON; None: none stored


def run_table(summary: RunSummary) -> str:
    return kv_table(
        [
            ("run", summary.run_id),
            ("benchmark", summary.benchmark),
            ("created", summary.created_at),
            ("finished", summary.finished_at),
            ("data", summary.data.source),
            ("data fingerprint", summary.data.fingerprint),
            ("config fingerprint", summary.config_fingerprint),
            ("culturebias", summary.culturebias_version),
            ("summary schema", summary.schema_version),
        ]
    )


def model_table(summary: RunSummary) -> str:
    roles = summary.model.roles()
    if not roles:
        return "<p>No model port was used by this run.</p>"
    head = "".join(f"<th>{h}</th>" for h in ("role", "model", "backend", "dtype", "kind", "parameters"))
    rows = "".join(
        f"<tr><th scope=\"row\">{text(role)}</th><td>{text(i.model)}</td><td>{text(i.backend)}</td><td>{text(i.dtype)}</td>"
        f"<td>{text(i.kind)}</td><td class=\"num\">{text(i.parameters if i.parameters is not None else '–')}</td></tr>"
        for role, i in roles.items()
    )
    return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def figures_section(paths: Sequence[Path]) -> str:
    embedded = "".join(figure(p) for p in paths)
    return f"<section><h2>Figures</h2>{embedded}</section>" if embedded else ""


ALL_NUMBERS = "Every number of the run's metrics, breakdown by breakdown; a row's button opens the items behind it."


def results_sections(summary: RunSummary, drill: Drill | None, markdown: str) -> tuple[str, str, str]:
    """(the results as the paper lays them out, how to read them, every number of the metrics block).

    Without the benchmark's report.md the metrics block itself is the results, shown open."""
    block = render_block("", fold(summary.metrics.model_dump(mode="json")), drill)  # a value and its interval: one cell
    paper, reading = paper_sections(markdown)
    if not paper:
        return f'<section><h2>Results</h2><p class="muted">{ALL_NUMBERS} Click a column heading to sort.</p>{block}</section>', "", ""
    return (
        f"<section><h2>Results</h2>{paper}</section>",
        reading,
        disclosure("Every number of the run's metrics", ALL_NUMBERS, block),
    )


def strata_section(summary: RunSummary) -> str:
    """A sampled run's strata, what was drawn from each, behind a disclosure under the card."""
    if not has_strata(summary):
        return ""
    return disclosure("Sampled strata", strata_caption(summary.sample), strata_table_html(summary.sample))


def items_section(drill: Drill | None) -> str:
    if drill is None:
        return ""
    if not drill:
        return "<p>This run kept no per-item records.</p>"
    return items_table(drill.records[: drill.cap], len(drill.records))


def run_page(
    summary: RunSummary,
    figures: Sequence[Path] = (),
    items: Sequence[Any] | None = None,  # Any: ItemRecords or their JSON
    benchmark_title: str | None = None,
    headlines: Sequence[HeadlineMetric] = (),
    verdict: str = "",
    language: str | None = None,
    markdown: str = "",
) -> str:
    """The page: the policy verdict (a checked run's, as HTML), the headline card, the results, the figures,
    then every detail behind a disclosure."""
    name = benchmark_title or summary.benchmark
    title = f"{name} report: {main_model(summary)[0]}"
    drill = Drill(items) if items is not None else None
    notes = "".join(f"<li>{text(prose(n))}</li>" for n in summary.notes)
    results, reading, all_numbers = results_sections(summary, drill, markdown)
    body = [
        f"<h1>{text(title)}</h1>",
        verdict,
        headline_card(summary, headlines, name),
        strata_section(summary),
        results,
        figures_section(figures),
        reading,
        all_numbers,
        disclosure("Counts", "How many items, answers and requests each stage saw, and how many it set aside.",
                   render_block("", summary.counts.model_dump(mode="json"))),
        disclosure("Notes", "What the run reported about itself while it ran.", f"<ul>{notes}</ul>" if notes else ""),
        disclosure("Details", "The run's settings as they took effect and the protocol's intermediate numbers.",
                   render_block("", summary.details.model_dump(mode="json"), drill)),
        disclosure("Run", "Which run this is, on which data, with which settings (fingerprints identify them).", run_table(summary)),
        disclosure("Models", "Every model the run used, by role, with its backend and size.", model_table(summary)),
        disclosure("Items", "Every item of the run (a results row above opens the items behind it).", items_section(drill)),
        items_data(drill),  # last: the rows above chose what it embeds
    ]
    return page(title, "\n".join(b for b in body if b), language)


class HtmlRunReport:
    """Writes report.html; ``items`` gives a run's audit records for the drill-down."""

    def __init__(
        self,
        items: ItemSource | None = None,
        title: str | None = None,
        headlines: Sequence[HeadlineMetric] = (),
        verdict: str = "",
        language: str | None = None,
    ):
        self.items = items
        self.language = language
        self.title = title
        self.headlines = tuple(headlines)
        self.verdict = verdict

    def write(self, summary: RunSummary, out_dir: Path, figures: Sequence[Path] = ()) -> list[Path]:
        records = self.items(summary.run_id) if self.items is not None else None
        path = Path(out_dir) / REPORT_FILE
        written = Path(out_dir) / "report.md"  # the benchmark's own layout, written from the same summary just before
        markdown = written.read_text(encoding="utf-8") if written.is_file() else ""
        page_ = run_page(summary, figures, records, self.title, self.headlines, self.verdict, self.language, markdown)
        path.write_text(page_, encoding="utf-8")
        return [path]


ResultT = TypeVar("ResultT")  # a run's summary, or a comparison
ResultT_contra = TypeVar("ResultT_contra", contravariant=True)


class _Markdown(Protocol[ResultT_contra]):
    def write(self, result: ResultT_contra, out_dir: Path, /) -> list[Path]: ...


class _Html(Protocol[ResultT_contra]):
    def write(self, result: ResultT_contra, out_dir: Path, figures: Sequence[Path], /) -> list[Path]: ...


class WithHtml(Generic[ResultT]):
    """A report writer (Markdown) followed by the HTML page that embeds the figures it drew."""

    def __init__(self, markdown: _Markdown[ResultT], html: _Html[ResultT]):
        self.markdown = markdown
        self.html = html

    def write(self, result: ResultT, out_dir: Path) -> list[Path]:
        written = list(self.markdown.write(result, out_dir))
        figures = [p for p in written if Path(p).suffix.lower() in (".png", ".svg")]
        return [*written, *self.html.write(result, out_dir, figures)]
