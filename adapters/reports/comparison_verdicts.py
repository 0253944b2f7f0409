"""The policy verdicts (``culturebias check``) on compared runs, which comparison.md and comparison.html open with."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from culturebias.adapters.reports.markdown import table
from culturebias.domain.comparison.envelope import Comparison
from culturebias.domain.policy.verdict import CriterionVerdict, PolicyVerdict

MARKS = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}


@dataclass(frozen=True)
class ComparedVerdict:
    """One policy's verdict, cut to the criteria that read a compared run, each with the runs' labels."""

    verdict: PolicyVerdict
    criteria: list[tuple[CriterionVerdict, str]]  # (criterion, "label" or "label against baseline label")


def compared_verdicts(verdicts: Sequence[PolicyVerdict], comparison: Comparison[Any]) -> list[ComparedVerdict]:  # Any: a comparison of any benchmark
    """Each distinct verdict that decided on a compared run (as the run or as its baseline), in the order given."""
    labels = {run.run_id: run.label for run in comparison.runs}
    seen: set[str] = set()
    out = []
    for verdict in verdicts:
        key = verdict.to_json()
        if key in seen:
            continue
        seen.add(key)
        rows = []
        for criterion in verdict.criteria:
            if criterion.run_id not in labels and criterion.baseline_run_id not in labels:
                continue
            run = labels.get(criterion.run_id or "", f"run {criterion.run_id} (not compared)")
            base = criterion.baseline_run_id
            against = "" if base is None else f" against baseline {labels.get(base, f'run {base} (not compared)')}"
            rows.append((criterion, run + against))
        if rows:
            out.append(ComparedVerdict(verdict, rows))
    return out


def verdict_markdown(verdicts: Sequence[PolicyVerdict], comparison: Comparison[Any]) -> str:  # Any: a comparison of any benchmark
    """comparison.md's first section where a policy was checked on the compared runs."""
    sections = []
    for shown in compared_verdicts(verdicts, comparison):
        v = shown.verdict
        rows = [[c.name, run, f"**{MARKS[c.outcome]}**", c.reason.replace("|", "\\|")] for c, run in shown.criteria]
        sections.append(
            f"## Verdict of policy {v.policy}: {MARKS[v.outcome]}\n\n"
            f"{v.counts.passed} pass, {v.counts.failed} fail, {v.counts.inconclusive} inconclusive; checked "
            f"{v.checked_at} by culturebias {v.culturebias_version}.\n\n"
            + table(["criterion", "run", "verdict", "reason"], rows)
        )
    return "\n\n".join(sections)
