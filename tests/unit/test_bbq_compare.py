"""Rank-sum comparison of two runs' per-template scores (KoBBQ vs e.g. a machine-translated BBQ)."""

from __future__ import annotations

import functools
import math

import pytest

from culturebias.adapters.scripted.backend import ScriptedGenerator
from culturebias.application.bbq.compare import compare_runs
from culturebias.domain.bbq.summary import KoBBQSummary, TemplateScores
from culturebias.domain.errors import ConfigError
from culturebias.testing.context import run_with_fakes


@functools.cache
def base() -> KoBBQSummary:
    """A real KoBBQ summary (a scripted model always answering "A") whose template scores the tests replace."""
    result = run_with_fakes(
        "kobbq",
        options={"mode": "generate", "prompts": "1", "limit": 3, "statistics": False},
        generator=ScriptedGenerator(lambda request, rendered: "A"),
    )
    assert isinstance(result.summary, KoBBQSummary)
    return result.summary


def summary(run_id: str, values: list[float | None]) -> KoBBQSummary:
    scores = {
        f"t-{i:03d}": TemplateScores(acc_amb=0.5, acc_dis=None, diff_bias_amb=v, diff_bias_dis=None, ooc_ratio=0.0)
        for i, v in enumerate(values)
    }
    template = base()
    details = template.details.model_copy(update={"template_scores": scores})
    return template.model_copy(update={"run_id": run_id, "details": details})


def test_compare_runs_by_hand():
    # ranks of a = 1, 2, 3 among six values; W = 6, expected 10.5, sd sqrt(3·3·7/12)
    result = compare_runs(summary("ko", [0.1, 0.2, 0.3, None]), summary("mt", [0.4, 0.5, 0.6]))
    assert result["statistic"] == pytest.approx(-4.5 / math.sqrt(63 / 12))
    assert (result["n_a"], result["n_b"], result["run_a"], result["run_b"]) == (3, 3, "ko", "mt")
    assert result["p_value"] == pytest.approx(0.0495346, abs=1e-6)


def test_compare_runs_needs_template_scores_and_a_known_metric():
    with pytest.raises(ConfigError):
        compare_runs(summary("x", []), summary("mt", [0.1]))
    with pytest.raises(ConfigError):
        compare_runs(summary("a", [0.1]), summary("b", [0.2]), metric="s_amb")
