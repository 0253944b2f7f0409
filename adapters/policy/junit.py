"""A policy verdict as JUnit XML (``culturebias check --junit FILE``), which CI systems display.

One testcase per criterion, named by the criterion, its class the policy and
benchmark. A failing criterion is a ``<failure>`` whose message is the reason;
an inconclusive one an ``<error type="inconclusive">`` (the check could not
decide), or a failure or a pass where ``--inconclusive`` says so. Every
testcase carries its reason in ``<system-out>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from culturebias.domain.policy.verdict import CriterionVerdict, InconclusiveAs, PolicyVerdict


def _case(suite: ET.Element, policy: str, verdict: CriterionVerdict, inconclusive: InconclusiveAs) -> str:
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
    ET.SubElement(case, "system-out").text = f"{verdict.outcome}: {verdict.reason}"
    return kind or "pass"


def junit_xml(verdict: PolicyVerdict, inconclusive: InconclusiveAs = "inconclusive") -> str:
    root = ET.Element("testsuites", {"name": "culturebias check"})
    suite = ET.SubElement(root, "testsuite", {"name": verdict.policy, "timestamp": verdict.checked_at, "time": "0"})
    properties = ET.SubElement(suite, "properties")
    for run in verdict.runs:
        ET.SubElement(properties, "property", {"name": f"{run.role}.{run.benchmark}", "value": f"{run.run_id} ({run.where})"})
    kinds = [_case(suite, verdict.policy, v, inconclusive) for v in verdict.criteria]
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
