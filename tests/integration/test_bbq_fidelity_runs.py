"""KoBBQ and CBBQ runs end to end on scripted ports: the paper's tests, settings and breakdowns in summary and report."""

from __future__ import annotations

import shutil

from culturebias.adapters.kobbq.files import BUNDLED, REFERENCE_PREFIX
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
from culturebias.domain.bbq.keys import AnswerKey
from culturebias.testing.context import run_with_fakes


def biased_everywhere_but_unknown_on_kobbq(request, _rendered: str) -> str:
    """Reference questions (ids prefixed) get option A, KoBBQ ones option C: the scores differ by data set."""
    key = AnswerKey.decode(request.key)
    return "A" if key.sample_id.startswith(REFERENCE_PREFIX) else "C"


def test_kobbq_run_with_a_reference_folder_reports_the_papers_tests(tmp_path):
    data = tmp_path / "kobbq"
    data.mkdir()
    for name in ("KoBBQ_test_samples.tsv", "evaluation_prompts.tsv"):
        shutil.copy(BUNDLED / name, data / name)
    shutil.copy(BUNDLED / "KoBBQ_test_samples.tsv", data / "reference_samples.tsv")
    result = run_with_fakes(
        "kobbq",
        options={"mode": "generate", "prompts": "1", "permutations": "0", "limit": 400},
        data_path=data,
        out_dir=tmp_path / "out",
        generator=ScriptedGenerator(biased_everywhere_but_unknown_on_kobbq),
    )
    metrics = result.summary.metrics
    assert metrics.answering is not None and metrics.answering.mode == "generate" and metrics.answering.matches_papers
    tests = metrics.tests
    assert tests is not None and tests.reference == "reference_samples.tsv" and tests.confidence == 0.99
    assert {r.label_type for r in tests.rank_sum_reference} == {"all", "ST", "TM"}
    assert result.summary.counts.answers == 400  # the reference's 400 answers are not counted
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "## The paper's tests (Figs. 3–4; Tukey HSD at 99%)" in report
    assert "homogeneous groups" in report and "### Wilcoxon rank-sum against reference_samples.tsv (Table 4)" in report
    assert "requested: generate" in report


def test_cbbq_likelihood_run_says_the_papers_generated_and_shows_the_cot_and_group_topic_breakdown(tmp_path):
    def reasoning(request, _rendered: str) -> str:
        return "想一想。"

    result = run_with_fakes(
        "cbbq",
        options={"condition": "q_if_cot", "limit": 8, "mode": "auto"},
        out_dir=tmp_path,
        scorer=ScriptedScorer(lambda context, continuation: -1.0 if continuation.strip() == "C" else -2.0),
        generator=ScriptedGenerator(reasoning),
    )
    metrics = result.summary.metrics
    assert metrics.mode == "likelihood" and metrics.answering.requested == "auto"  # no chat template: a base model
    assert metrics.answering.matches_papers is False
    assert metrics.reasoning is not None and metrics.reasoning.decoding == "sampled"
    rows = metrics.by_condition["q_if_cot"].by_group_topic
    assert rows and {r.category for r in rows} == {"disease", "gender", "region", "sexual_orientation"}
    assert sum(r.scores.counts.n_amb for r in rows) == metrics.overall.counts.n_amb
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "the papers generated their answers" in report
    assert "reasoning **sampled**" in report and "as in the paper" in report
    assert "By targeted group × stereotype topic (Q+IF+CoT; paper Fig. 6)" in report
    assert "weights' source: culturebias's default (0.4, 0.6)" in report


def test_a_reference_file_in_a_wrong_shape_is_a_data_error_naming_it(tmp_path):
    import pytest

    from culturebias.adapters.kobbq.files import KoBBQFiles
    from culturebias.domain.errors import DataError

    for name in ("KoBBQ_test_samples.tsv", "evaluation_prompts.tsv"):
        shutil.copy(BUNDLED / name, tmp_path / name)
    (tmp_path / "reference_samples.tsv").write_text("sample_id\tcontext\nage-001a-001-amb-bsd\tx\n", encoding="utf-8")
    with pytest.raises(DataError, match="missing column") as error:
        KoBBQFiles(str(tmp_path)).load()
    assert "reference_samples.tsv" in str(error.value)
