"""KoBBQ runs end to end under either evaluator: summary, extra metrics, Table 4 scores and the report."""

from __future__ import annotations

import shutil

import pytest

from culturebias.adapters.kobbq.files import BUNDLED, KoBBQFiles, REFERENCE_PREFIX
from culturebias.domain.bbq.answer_order import shown_order
from culturebias.domain.bbq.keys import AnswerKey
from culturebias.testing.context import run_with_fakes
from culturebias.testing.scripted import ScriptedGenerator

CATEGORY = "race_ethnicity_nationality"  # holds versions c and d


@pytest.fixture(scope="module")
def items():
    return {i.sample_id: i for i in KoBBQFiles(None).load().items}


def run(tmp_path, items, evaluator: str):
    data = tmp_path / "kobbq"
    data.mkdir(parents=True)
    for name in ("KoBBQ_test_samples.tsv", "evaluation_prompts.tsv"):
        shutil.copy(BUNDLED / name, data / name)
    shutil.copy(BUNDLED / "KoBBQ_test_samples.tsv", data / "reference_samples.tsv")

    def biased_here_unknown_on_the_reference(request, _rendered: str) -> str:
        key = AnswerKey.decode(request.key)
        if key.sample_id.startswith(REFERENCE_PREFIX):
            return "C" if key.permutation == 0 else "A"  # inconsistent across orders
        item = items[key.sample_id]
        return "ABC"[shown_order(3, key.permutation).index(item.biased_index)]

    options = {"mode": "generate", "prompts": "1", "categories": CATEGORY, "evaluator": evaluator}
    return run_with_fakes(
        "kobbq", options=options, data_path=data, out_dir=tmp_path / "out",
        generator=ScriptedGenerator(biased_here_unknown_on_the_reference),
    )  # fmt: skip


def test_the_second_evaluator_moves_diff_bias_dis_only_and_both_report_the_extras(tmp_path, items):
    five = run(tmp_path / "five", items, "5_evaluation").summary.metrics
    root = run(tmp_path / "root", items, "KoBBQ_evaluation").summary.metrics
    assert (five.evaluator, root.evaluator) == ("5_evaluation", "KoBBQ_evaluation")
    # Always biased: 5_evaluation's DiffBias_d is 1; KoBBQ_evaluation puts version d on the other side.
    assert five.overall.diff_bias_dis.mean == pytest.approx(1.0)
    counts = root.overall.counts["1"]
    d = counts.n_version_d
    assert d > 0 and counts.n_version_d_correct == d
    expected = 1.0 - d / (counts.n_c + d)
    assert root.overall.diff_bias_dis.mean == pytest.approx(expected)
    interval = (root.overall.intervals or {}).get("diff_bias_dis")
    if interval is not None and interval.defined:  # resampled under the same evaluator as the point
        assert interval.low <= expected + 1e-9 and interval.high >= expected - 1e-9
    for metric in ("acc_amb", "acc_dis", "diff_bias_amb", "acc_overall", "bias_score_amb", "bias_score_dis", "inconsistency"):
        assert getattr(five.overall, metric).mean == pytest.approx(getattr(root.overall, metric).mean), metric
    assert five.overall.bias_score_dis.mean == pytest.approx(1.0)  # every disambiguated answer is the biased one
    assert five.overall.inconsistency.mean == pytest.approx(1.0)  # the same option in all three orders

    rows = {(r.data, r.label_type): r for r in root.tests.reference_scores}
    assert {label for _, label in rows} == {"all", "ST", "TM"}
    reference = rows[("reference_samples.tsv", "all")]
    # The reference answers C in order 0 (unknown) and A otherwise: its accuracy differs from this data's.
    assert reference.answers > 0 and reference.acc_amb != rows[("this data", "all")].acc_amb

    report = (tmp_path / "root" / "out" / "report.md").read_text(encoding="utf-8")
    assert "KoBBQ_evaluation.py" in report and "version b only" in report
    assert "## More metrics (the authors' KoBBQ_evaluation.py)" in report and "inconsistency" in report
    assert "### Scores of both data sets (Table 4; means over prompts)" in report
