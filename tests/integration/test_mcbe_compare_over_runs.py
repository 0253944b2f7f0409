"""McBE ``compare`` on repeated runs (the means over the runs) and the paper's Table 12 across models.

Two scripted models, three categories, BS under ``table7`` and ``table11``, two sampled
runs each: the rating's error is a per-model, per-prompt-set, per-category offset plus
one point in odd-seeded runs, so every mean over the runs is 95 − 10·offset while the
first run's score is 100 − 10·offset.
"""

from __future__ import annotations

import pytest
from scipy import stats

from culturebias.domain.mcbe.comparison import compare_mcbe
from culturebias.domain.mcbe.instances import BEI, McBEDataset
from culturebias.domain.sampling import SamplingSettings
from culturebias.testing.context import run_with_fakes
from culturebias.testing.scripted import ScriptedGenerator

HUMAN = {"gender": 2.0, "region": 4.0, "age": 6.0}
OFFSETS = {
    "A": {"table7": {"gender": 0, "region": 1, "age": 2}, "table11": {"gender": 1, "region": 1, "age": 3}},
    "B": {"table7": {"gender": 3, "region": 0, "age": 1}, "table11": {"gender": 2, "region": 1, "age": 0}},
}
BEIS = tuple(
    BEI(c, "那天，", f"[{c}][PLH]说了一句话。", ("甲", "乙"), "子类", "解释。", h, f"{c}.xlsx", 2) for c, h in HUMAN.items()
)


def _model(name: str):
    def rule(request, prompt: str) -> str:
        text = request.messages[0].content
        wording = "table11" if text.startswith("请你仔细阅读") else "table7"
        [category] = [c for c in HUMAN if f"[{c}]" in text]
        return f"{HUMAN[category] + OFFSETS[name][wording][category] + request.params.seed % 2:g}"

    return ScriptedGenerator(rule, name=f"model-{name}")


def _run(name: str):
    result = run_with_fakes(
        "mcbe",
        options={"tasks": "bs", "prompt_set": "table7,table11"},
        dataset=McBEDataset(BEIS),
        generator=_model(name),
        repeats=2,
        sampling=SamplingSettings(temperature=0.7, seed=4),
    )
    return result.summary


def test_compare_reads_the_means_over_the_runs_and_correlates_prompt_sets_over_model_category_cells():
    a, b = _run("A"), _run("B")
    # the summary's own cells are the first run's (seed 4: no extra point), the means are half a point lower
    assert a.metrics.categories["region"].bs == 90.0
    assert a.metrics.repeat_means.categories["region"]["bs"].mean == 85.0
    assert a.metrics.repeat_means.prompt_variants["table11"]["age"]["bs"].mean == 65.0

    body, _ = compare_mcbe(["A", "B"], [a, b])
    expected = {m: {c: 95.0 - 10 * OFFSETS[m]["table7"][c] for c in HUMAN} for m in OFFSETS}
    assert {m: {c: row["bs"] for c, row in body.cells[m].items()} for m in body.cells} == expected
    assert body.task_means["A"]["bs"] == pytest.approx(85.0) and body.overall["B"] == pytest.approx(sum(expected["B"].values()) / 3)
    assert body.runs == {"A": 2, "B": 2}
    assert body.std["A"]["bs"] == pytest.approx(50**0.5)  # the task score is 90 in the first run, 80 in the second

    [row] = body.prompt_robustness
    assert (row.task, row.against, row.prompt_set, row.models) == ("bs", "table7", "table11", ["A", "B"])
    first = [95.0 - 10 * OFFSETS[m]["table7"][c] for m in OFFSETS for c in HUMAN]
    variant = [95.0 - 10 * OFFSETS[m]["table11"][c] for m in OFFSETS for c in HUMAN]
    rho, rho_p = stats.spearmanr(first, variant)
    r, r_p = stats.pearsonr(first, variant)
    cell = row.correlation
    assert cell.n == 6 and sorted(cell.categories) == sorted(f"{m}/{c}" for m in OFFSETS for c in HUMAN)
    assert (cell.spearman, cell.spearman_p) == (pytest.approx(rho), pytest.approx(rho_p))
    assert (cell.pearson, cell.pearson_p) == (pytest.approx(r), pytest.approx(r_p))


def test_single_runs_have_no_means_and_no_robustness_without_a_further_set():
    result = run_with_fakes("mcbe", options={"tasks": "bs"}, dataset=McBEDataset(BEIS), generator=_model("A"))
    body, _ = compare_mcbe(["A", "A2"], [result.summary, result.summary])
    assert result.summary.metrics.repeat_means is None
    assert body.runs is None and body.std is None and body.prompt_robustness is None
    assert body.cells["A"]["gender"]["bs"] == 100.0


def test_the_comparison_report_says_means_over_runs_and_shows_table_12(tmp_path):
    from culturebias.application.compare import compare_summaries
    from culturebias.testing.benchmarks import comparer, comparison_report

    runs = [_run("A"), _run("B")]
    runs = [s.model_copy(update={"model": s.model.model_copy(update={"generator": s.model.generator.model_copy(update={"model": m})})})
            for s, m in zip(runs, "AB")]
    compare_summaries(runs, comparer("mcbe"), out_dir=tmp_path, report=comparison_report("mcbe"))
    report = (tmp_path / "comparison.md").read_text(encoding="utf-8")
    assert "Each score is the mean over the model's runs (A: 2, B: 2" in report
    assert "| gender | – | 95.00 |" not in report and "### Std over the runs" in report
    assert "## Prompt robustness across models (paper Table 12)" in report and "| BS | table7 | table11 |" in report


def test_the_html_report_holds_every_score_over_the_runs(tmp_path):
    from culturebias.adapters.reports.html.run_report import HtmlRunReport

    summary = _run("A")
    [page] = HtmlRunReport().write(summary, tmp_path)
    text = page.read_text(encoding="utf-8")
    section = text[text.index("repeat_means") :]
    assert 'data-v="85.0"' in section  # region's BS mean over the two runs (the first run's is 90)
    assert "over prompts" not in section[: section.index("</table>")]  # a spread over runs, not prompts
