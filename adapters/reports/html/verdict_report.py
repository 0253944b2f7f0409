"""``ports.verdicts.VerdictReports``: a run's report.html rewritten to open with a policy verdict."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from culturebias.adapters.reports.html.run_report import REPORT_FILE, HtmlRunReport
from culturebias.adapters.reports.html.verdict import verdict_section
from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.policy.verdict import PolicyVerdict
from culturebias.domain.summary import RunSummary
from culturebias.ports.verdicts import ItemsOfRun


@dataclass(frozen=True)
class ReportLook:
    """What a benchmark's report shows besides the run: its title, headline metrics and language."""

    title: str | None
    headlines: Sequence[HeadlineMetric] = ()
    language: str | None = None


class VerdictHtmlReports:
    """Rewrites report.html (with the run's figures and item drill-down) so that it opens with the verdict."""

    def __init__(self, look: Callable[[str], ReportLook]):
        self._look = look

    def annotate(self, summary: RunSummary, folder: Path, items: ItemsOfRun, verdict: PolicyVerdict) -> list[Path]:
        look = self._look(summary.benchmark)
        report = HtmlRunReport(
            items,
            title=look.title,
            headlines=look.headlines,
            verdict=verdict_section(verdict, summary.run_id),
            language=look.language,
        )
        written = report.write(summary, folder, sorted(folder.glob("*.png")))
        return [p for p in written if p.name == REPORT_FILE]
