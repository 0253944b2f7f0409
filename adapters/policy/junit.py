"""A policy verdict as JUnit XML (``culturebias check --junit FILE``), which CI systems display.

One testcase per criterion, named by the criterion, its class the policy and
benchmark. A failing criterion is a ``<failure>`` whose message is the reason;
an inconclusive one an ``<error type="inconclusive">`` (the check could not
decide), or a failure or a pass where ``--inconclusive`` says so. Every
testcase carries its reason in ``<system-out>``, followed by the caveats of the
runs it read (domain/caveats.py) and, where it decided on a limited or sampled
run because of ``allow_limited``, that; the suite's properties list every
run's caveats (``caveat.<role>.<benchmark>.<kind>``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from culturebias.domain.caveats import Caveat
from culturebias.domain.policy.verdict import CriterionVerdict, InconclusiveAs, PolicyVerdict


def case_text(verdict: CriterionVerdict, caveats: dict[str, list[Caveat]]) -> str:
    """The testcase's text: outcome and reason, then what it needed allow_limited for, then its runs' caveats."""
    lines = [f"{verdict.outcome}: {verdict.reason}"]
    if verdict.allowed_limited:
        lines.append(f"decided only because allow_limited = true: {verdict.allowed_limited}")
    for which, run_id in (("run", verdict.run_id), ("baseline", verdict.baseline_run_id)):
        lines += [f"caveat ({which} {run_id}): {c.text}" for c in caveats.get(run_id or "", [])]
    return "\n".join(lines)


def _case(
    suite: ET.Element, policy: str, verdict: CriterionVerdict, inconclusive: InconclusiveAs, caveats: dict[str, list[Caveat]]
) -> str:
    case = ET.SubElement(
        suite, "testcase", {"classname": f"{policy}.{verdict.criterion.benchmark}", "name": verdict.name, "time": "0"}
    )
    outcome = verdict.outcome
    if outcome == "inconclusive" and inconclusive != "inconclusive":
        outcome = inconclusive
        kind = "failure" if outcome == "fail" else None
    else:
        kind = {"fail": "failure", "inconclusive": "error", "pass": None}[outcome]
    if kind is not None:
        element = ET.SubElement(case, kind, {"type": verdict.outcome, "message": verdict.reason})
        element.text = verdict.reason
    ET.SubElement(case, "system-out").text = case_text(verdict, caveats)
    return kind or "pass"


def junit_xml(verdict: PolicyVerdict, inconclusive: InconclusiveAs = "inconclusive") -> str:
    root = ET.Element("testsuites", {"name": "culturebias check"})
    suite = ET.SubElement(root, "testsuite", {"name": verdict.policy, "timestamp": verdict.checked_at, "time": "0"})
    properties = ET.SubElement(suite, "properties")
    for run in verdict.runs:
        ET.SubElement(properties, "property", {"name": f"{run.role}.{run.benchmark}", "value": f"{run.run_id} ({run.where})"})
        for c in run.caveats:
            ET.SubElement(properties, "property", {"name": f"caveat.{run.role}.{run.benchmark}.{c.kind}", "value": c.text})
    caveats = {run.run_id: run.caveats for run in verdict.runs}
    kinds = [_case(suite, verdict.policy, v, inconclusive, caveats) for v in verdict.criteria]
    counts = {
        "tests": str(len(kinds)),
        "failures": str(kinds.count("failure")),
        "errors": str(kinds.count("error")),
        "skipped": "0",
    }
    suite.attrib.update(counts)
    root.attrib.update(counts)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
