"""``application.annotate_reports`` over doubles of its ports, with the verdict-files adapter it is wired with:
the verdict is kept in each run folder that holds a summary.json, that run's report rewritten, the others passed over."""

from __future__ import annotations

import json
from pathlib import Path

from culturebias.adapters.policy.verdict_files import VERDICT_FILE, FolderVerdicts, read_verdict, stored_verdicts
from culturebias.application.annotate_reports import annotate_reports
from culturebias.domain.errors import ConfigError
from culturebias.domain.policy.verdict import OutcomeCounts, PolicyVerdict
from culturebias.domain.summary import RunSummary

VERDICT = PolicyVerdict(
    policy="release gate", checked_at="2026-11-28T00:00:00Z", culturebias_version="0.1.0", outcome="pass",
    counts=OutcomeCounts(passed=1, failed=0, inconclusive=0), runs=[], criteria=[],
)


class Archive:
    """``RunArchive`` double: every summary.json reads as the run ``run-<folder name>``; no store opens."""

    def open_store(self, store, *, must_exist=False):
        raise ConfigError(f"no result store at {store}")

    def load_summary(self, path):
        folder = Path(path) if Path(path).is_dir() else Path(path).parent
        return RunSummary.model_construct(benchmark="kobbq", run_id=f"run-{folder.name}")

    def summary_from_dict(self, payload, where="summary"):
        raise AssertionError("annotating reads summary files, not stored summaries")

    def recorded_store(self, run):
        return None  # every run's store is its folder's


class Reports:
    """``VerdictReports`` double: says which runs it annotated, and whether their verdict was kept by then."""

    def __init__(self):
        self.annotated = []

    def annotate(self, summary, folder, items, verdict):
        self.annotated.append((summary.run_id, (folder / VERDICT_FILE).is_file(), items(summary.run_id), verdict.policy))
        return [folder / "report.html"]


def run_folder(root: Path, name: str, with_summary: bool = True) -> Path:
    folder = root / name
    folder.mkdir()
    if with_summary:
        (folder / "summary.json").write_text(json.dumps({"benchmark": "kobbq"}), encoding="utf-8")
    return folder


def test_each_run_folder_with_a_summary_keeps_the_verdict_and_its_report_opens_with_it(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")  # not tmp_path: its summary.json files are stand-ins, not summaries
    a, b = run_folder(root, "a"), run_folder(root, "b")
    bare = run_folder(root, "bare", with_summary=False)
    reports = Reports()
    written = annotate_reports(
        VERDICT, [a, str(b / "summary.json"), bare], None, archive=Archive(), folders=FolderVerdicts(), reports=reports
    )
    assert written == [a / "report.html", b / "report.html"]
    assert reports.annotated == [("run-a", True, None, "release gate"), ("run-b", True, None, "release gate")]
    assert read_verdict(a / VERDICT_FILE) == VERDICT and not (bare / VERDICT_FILE).exists()
    assert stored_verdicts([a, bare, "run-id-in-a-store"]) == [VERDICT]  # what a comparison of these runs opens with


def test_a_run_named_by_id_has_no_folder_to_annotate():
    reports = Reports()
    assert annotate_reports(VERDICT, ["run-id"], None, archive=Archive(), folders=FolderVerdicts(), reports=reports) == []
    assert reports.annotated == []
