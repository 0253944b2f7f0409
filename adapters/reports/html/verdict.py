"""The policy verdict a checked run's report.html, and a comparison of checked runs, open with (``culturebias check``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from culturebias.adapters.reports.comparison_verdicts import MARKS, compared_verdicts
from culturebias.adapters.reports.html.page import text


def verdict_section(verdict: Any, run_id: str | None = None) -> str:  # Any: a PolicyVerdict
    """The policy's outcome and each criterion on this run (all criteria where ``run_id`` is None)."""
    rows = []
    for v in verdict.criteria:
        if run_id is not None and run_id not in (v.run_id, v.baseline_run_id):
            continue
        rows.append(
            f'<tr><th scope="row">{text(v.name)}</th><td class="verdict-{v.outcome}"><strong>{MARKS[v.outcome]}</strong></td>'
            f"<td>{text(v.reason)}</td></tr>"
        )
    counts = verdict.counts
    head = "".join(f"<th>{h}</th>" for h in ("criterion", "verdict", "reason"))
    return (
        f'<section id="verdict"><h2>Verdict of policy {text(verdict.policy)}: {MARKS[verdict.outcome]}</h2>'
        f'<p class="muted">{counts.passed} pass, {counts.failed} fail, {counts.inconclusive} inconclusive; checked '
        f"{text(verdict.checked_at)} by culturebias {text(verdict.culturebias_version)}.</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )


def comparison_verdict_sections(verdicts: Sequence[Any], comparison: Any) -> str:  # Any: PolicyVerdicts, a Comparison
    """comparison.html's opening where a policy was checked on the compared runs: each criterion with its run."""
    sections = []
    for shown in compared_verdicts(verdicts, comparison):
        v = shown.verdict
        rows = "".join(
            f'<tr><th scope="row">{text(c.name)}</th><td>{text(run)}</td><td class="verdict-{c.outcome}">'
            f"<strong>{MARKS[c.outcome]}</strong></td><td>{text(c.reason)}</td></tr>"
            for c, run in shown.criteria
        )
        head = "".join(f"<th>{h}</th>" for h in ("criterion", "run", "verdict", "reason"))
        sections.append(
            f'<section class="verdict"><h2>Verdict of policy {text(v.policy)}: {MARKS[v.outcome]}</h2>'
            f'<p class="muted">{v.counts.passed} pass, {v.counts.failed} fail, {v.counts.inconclusive} inconclusive; '
            f"checked {text(v.checked_at)} by culturebias {text(v.culturebias_version)}.</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></section>"
        )
    return "".join(sections)
