"""McBE across models: category × task cells, Friedman over the cells, Spearman and Pearson between models."""

from __future__ import annotations

import functools

import pytest

from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
from culturebias.domain.mcbe.comparison import cells, compare_mcbe, correlation, friedman
from culturebias.domain.mcbe.summary import McBESummary
from culturebias.testing.context import run_with_fakes


@functools.cache
def base() -> McBESummary:
    """A real McBE run on the embedded fixture (PC and BS), whose category scores the tests replace."""
    result = run_with_fakes(
        "mcbe",
        options={"tasks": "pc,bs"},
        scorer=ScriptedScorer(lambda context, text: -1.0 * len(text)),
        generator=ScriptedGenerator(lambda request, prompt: "5", name="model"),
    )
    assert isinstance(result.summary, McBESummary)
    return result.summary


def summary(run_id: str, gender_pc, gender_bs, region_pc, region_bs, worldview_bs) -> McBESummary:
    """The base summary with its gender, region and worldview cells set (worldview has no PC)."""
    template = base()
    values = {
        "gender": (gender_pc, gender_bs),
        "region": (region_pc, region_bs),
        "worldview": (None, worldview_bs),
    }
    categories = {
        name: template.metrics.categories[name].model_copy(update={"pc": pc, "bs": bs})
        for name, (pc, bs) in values.items()
    }
    metrics = template.metrics.model_copy(update={"categories": categories})
    return template.model_copy(update={"run_id": run_id, "metrics": metrics})


def test_cells_take_task_scores_only():
    assert cells(summary("x", 1, 2, 3, 4, 5)) == {
        "gender/pc": 1, "gender/bs": 2, "region/pc": 3, "region/bs": 4, "worldview/pc": None, "worldview/bs": 5,
    }


def test_friedman_across_three_models():
    # model c > b > a in every complete cell (5 of them; worldview/pc is None everywhere)
    tables = [cells(summary(n, *(v + k for v in (10, 20, 30, 40, 50)))) for k, n in enumerate("abc")]
    result, why_not = friedman(["a", "b", "c"], tables)
    assert why_not is None and result is not None
    assert (result.n_blocks, result.n_models) == (5, 3)
    # rank sums 5, 10, 15: 12/(5·3·4)·(25+100+225) − 3·5·4 = 70 − 60 = 10
    assert result.statistic == pytest.approx(10.0)
    assert result.blocks == ["gender/bs", "gender/pc", "region/bs", "region/pc", "worldview/bs"]


def test_friedman_needs_three_models():
    result, why_not = friedman(["a", "b"], [cells(summary("a", 1, 2, 3, 4, 5))] * 2)
    assert result is None and "three models" in (why_not or "")


def test_spearman_and_pearson_between_two_models():
    row = correlation("a", "b", cells(summary("a", 10, 20, 30, 40, 50)), cells(summary("b", 15, 25, 33, 60, 70)))
    assert row.blocks == ["gender/bs", "gender/pc", "region/bs", "region/pc", "worldview/bs"]
    assert row.spearman == pytest.approx(1.0)
    # deviations (−10, −20, 10, 0, 20) and (−15.6, −25.6, 19.4, −7.6, 29.4): r = 1450 / √(1000 · 2197.2)
    assert row.pearson == pytest.approx(0.978212, abs=1e-6)


def test_compare_mcbe_holds_each_models_cells_means_and_the_tests():
    runs = [summary("a", 10, 20, 30, 40, 50), summary("b", 15, 25, 33, 60, 70), summary("c", 90, 80, 70, 60, 50)]
    body, notes = compare_mcbe(["a", "b", "c"], runs)
    assert notes == [] and body.tasks == ["pc", "bs"]
    assert body.cells["b"]["region"] == {"pc": 33, "bs": 60}
    assert body.task_means["a"] == dict(runs[0].metrics.tasks.present())
    assert body.category_means["c"]["gender"] == runs[2].metrics.categories["gender"].mean
    assert body.friedman is not None and body.friedman.n_models == 3
    assert [(r.a, r.b) for r in body.correlations] == [("a", "b"), ("a", "c"), ("b", "c")]


def test_report_has_each_models_category_by_task_table_and_the_tests(tmp_path):
    from culturebias.testing.benchmarks import comparer, comparison_report
    from culturebias.application.compare import compare_summaries

    runs = [summary("a", 10, 20, 30, 40, 50), summary("b", 15, 25, 33, 60, 70), summary("c", 90, 80, 70, 60, 50)]
    runs = [s.model_copy(update={"model": s.model.model_copy(update={"generator": s.model.generator.model_copy(update={"model": s.run_id})})})
            for s in runs]
    result = compare_summaries(runs, comparer("mcbe"), out_dir=tmp_path, report=comparison_report("mcbe"))
    report = (tmp_path / "comparison.md").read_text(encoding="utf-8")
    assert result.comparison.labels() == ["a", "b", "c"]
    assert "| region | 33.00 | 60.00 |" in report
    friedman = result.comparison.body.friedman
    assert f"Friedman χ² = {friedman.statistic:.3f}" in report
    assert "| a | b | 1.000 |" in report
    assert (tmp_path / "comparison_mcbe.png").is_file()
