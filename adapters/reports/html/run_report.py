"""report.html: one self-contained page per run, from the typed summary and the run's audit records.

Every number is read from the typed summary; the figures are the PNGs the Markdown report drew
from it, embedded. Each breakdown row opens the items behind it (at most ``CAP`` embedded).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from culturebias.adapters.reports.html.drilldown import Drill, items_data, items_table
from culturebias.adapters.reports.html.page import figure, page, text
from culturebias.adapters.reports.html.tree import kv_table, render_block
from culturebias.adapters.reports.markdown import SMALL_MODEL_PARAMETERS
from culturebias.domain.headlines import HeadlineMetric, headline_entries
from culturebias.domain.summary import RunSummary

REPORT_FILE = "report.html"
# run id → the run's audit records (ItemRecord objects or their JSON); None where a run kept none
ItemSource = Callable[[str], Sequence[Any] | None]  # Any: ItemRecords or their JSON; None: none stored


def banners(summary: RunSummary) -> str:
    out = []
    if summary.limit is not None:
        out.append(
            f'<p class="banner"><strong>A limited run: not comparable to a full one.</strong> '
            f"<code>--limit {summary.limit.n}</code> evaluated only "
            f"{text(summary.limit.meaning.replace(' N ', f' {summary.limit.n} ', 1))}.</p>"
        )
    if summary.not_measured is not None:
        out.append(
            f'<p class="banner"><strong>Not measured.</strong> {text(summary.not_measured)}. '
            "The headline numbers are null, not zero.</p>"
        )
    if any(i.parameters and i.parameters < SMALL_MODEL_PARAMETERS for i in summary.model.roles().values()):
        out.append(
            '<p class="banner"><strong>A small model ran.</strong> A model of this size checks that the method '
            "works end to end; its numbers say nothing about the bias of a deployable model.</p>"
        )
    return "".join(out)


def headline_section(summary: RunSummary, headlines: Sequence[HeadlineMetric]) -> str:
    """The benchmark's declared headline metrics: value, 95% interval, n and which way is better."""
    entries = headline_entries(summary, headlines)
    if not entries:
        return ""
    rows = []
    for metric in headlines:
        entry = entries.get(metric.name)
        if entry is None:
            continue
        interval = entry.interval
        if interval is None:
            ci, n = "not computed", "–"
        elif not interval.defined:
            ci, n = f"undefined ({interval.note or 'no resampling possible'})", str(interval.n)
        else:
            ci, n = f"{interval.low:.3f} to {interval.high:.3f}", str(interval.n)
        value = "not measured" if entry.value is None else f"{entry.value:.3f}"
        rows.append(
            f'<tr><th scope="row">{text(metric.label)}</th><td class="num">{text(value)}</td><td>{text(ci)}</td>'
            f'<td class="num">{text(n)}</td><td>{text(metric.direction_words())}</td></tr>'
        )
    head = "".join(f"<th>{h}</th>" for h in ("metric", "value", "95% interval", "n", "direction"))
    return f'<section><h2>Headline</h2><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></section>'


def run_table(summary: RunSummary) -> str:
    return "<section><h2>Run</h2>" + kv_table(
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
    ) + "</section>"


def model_table(summary: RunSummary) -> str:
    roles = summary.model.roles()
    if not roles:
        return "<section><h2>Model</h2><p>No model port was used by this run.</p></section>"
    head = "".join(f"<th>{h}</th>" for h in ("role", "model", "backend", "dtype", "kind", "parameters"))
    rows = "".join(
        f"<tr><th scope=\"row\">{text(role)}</th><td>{text(i.model)}</td><td>{text(i.backend)}</td><td>{text(i.dtype)}</td>"
        f"<td>{text(i.kind)}</td><td class=\"num\">{text(i.parameters if i.parameters is not None else '–')}</td></tr>"
        for role, i in roles.items()
    )
    return f'<section><h2>Model</h2><table class="sortable"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></section>'


def figures_section(paths: Sequence[Path]) -> str:
    embedded = "".join(figure(p) for p in paths)
    return f"<section><h2>Figures</h2>{embedded}</section>" if embedded else ""


def items_section(drill: Drill | None) -> str:
    if drill is None:
        return ""
    if not drill:
        return "<section><h2>Items</h2><p>This run kept no per-item records.</p></section>"
    return (
        "<section><h2>Items</h2><p>Every item of the run; a row above opens the items behind it.</p>"
        f"{items_table(drill.records[: drill.cap], len(drill.records))}</section>"
    )


def run_page(
    summary: RunSummary,
    figures: Sequence[Path] = (),
    items: Sequence[Any] | None = None,  # Any: ItemRecords or their JSON
    benchmark_title: str | None = None,
    headlines: Sequence[HeadlineMetric] = (),
    verdict: str = "",
) -> str:
    """The page; ``verdict`` (a checked run's policy verdict, as HTML) opens it, under the title."""
    title = f"{benchmark_title or summary.benchmark}: run {summary.run_id}"
    drill = Drill(items) if items is not None else None
    notes = "".join(f"<li>{text(n)}</li>" for n in summary.notes)
    body = [
        f"<h1>{text(title)}</h1>",
        verdict,
        banners(summary),
        headline_section(summary, headlines),
        run_table(summary),
        model_table(summary),
        figures_section(figures),
        render_block("metrics", summary.metrics.model_dump(mode="json"), drill),
        render_block("counts", summary.counts.model_dump(mode="json")),
        f"<section><h2>Notes</h2><ul>{notes}</ul></section>" if notes else "",
        render_block("details", summary.details.model_dump(mode="json"), drill),
        items_section(drill),
        items_data(drill),  # last: the rows above chose what it embeds
    ]
    return page(title, "\n".join(b for b in body if b))


class HtmlRunReport:
    """Writes report.html; ``items`` gives a run's audit records for the drill-down."""

    def __init__(
        self,
        items: ItemSource | None = None,
        title: str | None = None,
        headlines: Sequence[HeadlineMetric] = (),
        verdict: str = "",
    ):
        self.items = items
        self.title = title
        self.headlines = tuple(headlines)
        self.verdict = verdict

    def write(self, summary: RunSummary, out_dir: Path, figures: Sequence[Path] = ()) -> list[Path]:
        records = self.items(summary.run_id) if self.items is not None else None
        path = Path(out_dir) / REPORT_FILE
        path.write_text(run_page(summary, figures, records, self.title, self.headlines, self.verdict), encoding="utf-8")
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
