"""Friedman and robustness over McBE summaries' category × task cells."""

from __future__ import annotations

import pytest

from culturebias.application.mcbe.compare import cells, compare_models, prompt_robustness_of


def summary(gender_pc, gender_bs, region_pc, region_bs, worldview_bs):
    return {
        "metrics": {
            "categories": {
                "gender": {"pc": gender_pc, "bs": gender_bs, "mean": 0, "invalid": {}},
                "region": {"pc": region_pc, "bs": region_bs, "mean": 0},
                "worldview": {"pc": None, "bs": worldview_bs, "mean": 0},
            }
        }
    }


def test_cells_take_task_scores_only():
    assert cells(summary(1, 2, 3, 4, 5)) == {
        "gender/pc": 1, "gender/bs": 2, "region/pc": 3, "region/bs": 4, "worldview/pc": None, "worldview/bs": 5,
    }


def test_friedman_across_three_models():
    # model c > b > a in every complete cell (5 of them; worldview/pc is None everywhere)
    result = compare_models({
        "a": summary(10, 20, 30, 40, 50),
        "b": summary(11, 21, 31, 41, 51),
        "c": summary(12, 22, 32, 42, 52),
    })
    assert result["n_blocks"] == 5 and result["n_models"] == 3
    # rank sums 5, 10, 15: 12/(5·3·4)·(25+100+225) − 3·5·4 = 70 − 60 = 10
    assert result["statistic"] == pytest.approx(10.0)


def test_prompt_robustness_between_two_runs():
    result = prompt_robustness_of(summary(10, 20, 30, 40, 50), summary(15, 25, 33, 60, 70))
    assert result["blocks"] == ["gender/bs", "gender/pc", "region/bs", "region/pc", "worldview/bs"]
    assert result["spearman"] == pytest.approx(1.0)
    # deviations (−10, −20, 10, 0, 20) and (−15.6, −25.6, 19.4, −7.6, 29.4): r = 1450 / √(1000 · 2197.2)
    assert result["pearson"] == pytest.approx(0.978212, abs=1e-6)
