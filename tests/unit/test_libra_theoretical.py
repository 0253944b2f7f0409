"""Table 1's theoretical LMs (issue 36 point 6): derived from their behaviour with a run's formulas, checked
against the paper's printed rows, carried by every summary (old ones too) and shown beside a run's scores and in
the comparison, with the paper's (StereoSet) iCAT column."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from culturebias.domain.libra.summary import LibraMetrics, LibraSummary
from culturebias.domain.libra.theoretical import THEORETICAL_LMS

REFERENCE = Path(__file__).parents[1] / "fixtures" / "reference_summaries" / "libra_tiny.json"

# LIBRA (Pang et al., ECIR 2025), Table 1, "Theoretical Language Models": lms, JSD, bbs, iCAT, EiCAT as printed.
PRINTED = {
    "RandomLM": (66.67, 0, 0, 66.67, 0),
    "IdealLM": (100, 0, 0, 100, 0),
    "LocalIdealLM": (100, 0, 100, 100, 100),
    "StereotypedLM": (100, 100, 100, 0, 0),
}


@pytest.mark.parametrize("model", THEORETICAL_LMS, ids=[m.name for m in THEORETICAL_LMS])
def test_each_theoretical_row_derived_from_its_behaviour_is_the_printed_one(model):
    lms, jsd, bbs, icat, eicat = PRINTED[model.name]
    assert (model.lms, model.jsd, model.bbs) == pytest.approx((lms, jsd, bbs), abs=0.005)
    assert model.icat == pytest.approx(icat, abs=0.005)  # computed, not copied: lms · min(ss, 100 − ss) / 50
    assert model.eicat == pytest.approx(eicat, abs=0.005)  # lms · (α(1 − JSD) + (1 − α) bbs), α = bbs


def test_a_summary_written_before_the_rows_loads_with_them_and_keeps_them():
    metrics = json.loads(REFERENCE.read_text(encoding="utf-8"))["metrics"]
    metrics.pop("reference_rows", None)  # as a summary written before the rows has it
    loaded = LibraMetrics.model_validate(metrics)
    assert [r.name for r in loaded.reference_rows] == [m.name for m in THEORETICAL_LMS]
    assert loaded.reference_rows[0].icat == pytest.approx(200 / 3)
    again = LibraMetrics.model_validate(json.loads(loaded.model_dump_json()))
    assert again.reference_rows == loaded.reference_rows


@functools.cache
def _run(name: str, per_char: float) -> LibraSummary:
    from culturebias.testing.context import run_with_fakes
    from culturebias.testing.scripted import ScriptedScorer

    result = run_with_fakes(
        "libra", options={"knowledge_boundary": "off"},
        scorer=ScriptedScorer(lambda c, x: -per_char * len(x) - (x[0] == "M"), name=name),
    )
    assert isinstance(result.summary, LibraSummary)
    return result.summary


def test_the_run_report_shows_the_theoretical_rows_beside_the_run(costly, tmp_path):
    from culturebias.adapters.libra.report import LibraReport

    summary = _run("short", 1.0)
    text = LibraReport().write(summary, tmp_path)[0].read_text(encoding="utf-8")
    overall = text.split("## Overall", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in overall.splitlines() if line.startswith("| theoretical: ")]
    assert [r.split("|")[1].strip() for r in rows] == [f"theoretical: {m.name}" for m in THEORETICAL_LMS]
    assert "66.67" in rows[0] and "RandomLM picks one of the three sentences at random" in overall


def test_the_comparison_shows_stereoset_icat_and_the_theoretical_rows(costly, tmp_path):
    from culturebias.adapters.libra.comparison_report import libra_sections
    from culturebias.domain.libra.comparison import LibraComparison, compare_libra
    from culturebias.domain.libra.stereoset_summary import StereoSetBlock, StereoSetScores

    a, b = _run("short", 1.0), _run("long", 2.0)
    scores = StereoSetScores(lms=91.0, ss=61.0, icat=70.98, items=10, targets=4)
    with_stereoset = b.model_copy(update={"metrics": b.metrics.model_copy(update={"stereoset": StereoSetBlock(
        file="dev.json", overall=scores, by_split={}, by_bias_type={})})})
    body, _ = compare_libra(["short", "long"], [a, with_stereoset])
    assert body.stereoset_icat == {"short": None, "long": 70.98}
    comparison = LibraComparison.model_construct(benchmark="libra", body=body, runs=[])
    sections, _ = libra_sections(comparison, tmp_path)
    lines = sections[0].splitlines()
    header = next(line for line in lines if line.startswith("| model"))
    cells = [c.strip() for c in header.split("|")[1:-1]]
    assert cells[:6] == ["model", "type", "LMS", "SS", "local iCAT", "StereoSet iCAT"]
    long_row = [c.strip() for c in next(line for line in lines if line.startswith("| long ")).split("|")[1:-1]]
    assert long_row[cells.index("StereoSet iCAT")] == "70.98"
    short_row = [c.strip() for c in next(line for line in lines if line.startswith("| short ")).split("|")[1:-1]]
    assert short_row[cells.index("StereoSet iCAT")] in ("–", "")
    theoretical = [[c.strip() for c in line.split("|")[1:-1]] for line in lines if "| theoretical |" in line]
    assert {len(row) for row in theoretical} == {len(cells)}  # as many cells as the header, interval columns too
    assert [row[0] for row in theoretical] == [m.name for m in THEORETICAL_LMS]
    stereotyped = theoretical[-1]
    assert stereotyped[cells.index("EiCAT")] in ("0", "0.00") and stereotyped[cells.index("JSD")] in ("100", "100.00")
