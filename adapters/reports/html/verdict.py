"""The policy verdict a checked run's report.html opens with (``culturebias check``)."""

from __future__ import annotations

from typing import Any

from culturebias.adapters.reports.html.page import text

MARKS = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}


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
