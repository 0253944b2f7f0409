"""`culturebias run twbias` end to end: real TWBias files, a tiny random chat model, resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from culturebias.bootstrap.cli import main
from culturebias.domain.twbias.summary import TWBiasSummary

pytestmark = pytest.mark.shared_data


@pytest.fixture(autouse=True)
def _restore_logging():
    """main() configures structlog for the process; later tests expect the defaults back."""
    yield
    import structlog

    structlog.reset_defaults()


@pytest.fixture(scope="module")
def tiny_model() -> Path:
    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    return cached_tiny_causal_lm()


def args(out: Path, data: Path, model: Path, *extra: str) -> list[str]:
    return [
        "run", "twbias", "--out", str(out),
        "--set", f"data.path={data}",
        "--set", "model.backend=hf",
        "--set", f"model.path={model}",
        "--set", "model.batch_size=16",
        "--set", "protocol.groups=gender",
        "--set", "protocol.prompt_types=0,1,2",
        "--set", "protocol.limit=4",
        "--set", "run.progress=false",
        "--set", "run.chunk_size=16",
        "--set", f"run.cache_dir={out.parent / 'cache'}",
        *extra,
    ]  # fmt: skip


def test_cli_run_writes_summary_report_and_states_the_boundary_rule(tmp_path, twbias_data, tiny_model):
    out = tmp_path / "run"
    assert main(args(out, twbias_data, tiny_model)) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["benchmark"] == "twbias"
    assert TWBiasSummary.model_validate(summary).as_dict()["metrics"] == summary["metrics"], "the typed summary, unchanged"
    assert summary["data"]["fingerprint"] and "TWBias files" in summary["data"]["source"]
    metrics = summary["metrics"]
    assert metrics["prompt_types"] == ["0", "1", "2"]
    assert set(metrics) >= {"gender", "analysis", "prompt_types"} and "ethnicity" not in metrics
    for key in ("female", "male"):
        block = metrics["gender"][key]
        assert {"bias_ratio", "effect_size", "n_prompts", "prompts", "by_toxicity", "by_category"} <= set(block)
        assert block["n_rows"] == 4 and block["n_prompts"] == 2
        assert block["bias_ratio"] in (0.0, 0.5, 1.0)
        for ptype in ("0", "1", "2"):
            stats = block["prompts"][ptype]
            assert {"n", "n_outliers", "mean_origin_ppl", "mean_replace_ppl", "t", "p_value", "cohens_d"} <= set(stats)
            assert stats["mean_origin_ppl"] > 1.0 and stats["mean_replace_ppl"] > 1.0
    rule = summary["model"]["scorer_provenance"]["boundary_rule"]
    assert rule == "straddle-to-continuation" == metrics["analysis"]["boundary_rule"]
    assert summary["counts"]["sentences_evaluated"] == 8
    assert summary["counts"]["skipped"] == {}, "the malformed T-A item at row 172 lies beyond the limit"
    report = (out / "report.md").read_text(encoding="utf-8")
    assert f"`{rule}`" in report and "A small model ran" in report
    assert "## Gender" in report


def test_the_authors_boundary_rule_is_selectable(tmp_path, twbias_data, tiny_model):
    out = tmp_path / "authors"
    assert main(args(out, twbias_data, tiny_model, "--set", "model.boundary_rule=authors", "--set", "protocol.prompt_types=1")) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["model"]["scorer_provenance"]["boundary_rule"] == "authors"
    assert "`authors`" in (out / "report.md").read_text(encoding="utf-8")


def test_ethnicity_run_writes_both_heat_maps(tmp_path, twbias_data, tiny_model):
    out = tmp_path / "eth"
    extra = ("--set", "protocol.groups=ethnicity", "--set", "protocol.prompt_types=1", "--set", "protocol.limit=2")
    assert main(args(out, twbias_data, tiny_model, *extra)) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    matrix = summary["metrics"]["ethnicity_matrix"]
    assert len(summary["metrics"]["ethnicity"]) == 16
    assert matrix["bias_ratio"]["T5_hakka"]["T5_hakka"] is None
    assert isinstance(matrix["effect_size"]["T1_hoklo"]["T3_han"], float)
    assert (out / "twbias_ethnicity_bias_ratio.png").stat().st_size > 0
    assert (out / "twbias_ethnicity_effect_size.png").stat().st_size > 0


def test_resume_after_an_interruption_scores_only_what_is_missing(tmp_path, twbias_data, tiny_model, monkeypatch):
    from culturebias.adapters.hf.scorer import HFScorer

    original = HFScorer.loglikelihood
    scored: list[int] = []
    budget = {"calls": 2}

    def interrupted(self, requests, progress=None):
        if budget["calls"] == 0:
            raise KeyboardInterrupt("killed")
        budget["calls"] -= 1
        scored.append(len(requests))
        return original(self, requests, progress)

    monkeypatch.setattr(HFScorer, "loglikelihood", interrupted)
    out = tmp_path / "resume"
    assert main(args(out, twbias_data, tiny_model)) == 130
    assert not (out / "summary.json").exists()
    first = sum(scored)
    assert first == 32  # two chunks of 16 stored before the kill

    budget["calls"] = 10**6
    scored.clear()
    assert main(args(out, twbias_data, tiny_model, "--resume")) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert sum(scored) == summary["counts"]["requests"] - first, "stored requests are not scored again"

    # A fresh run of the same configuration scores everything, and gets the same numbers.
    scored.clear()
    fresh = tmp_path / "fresh"
    assert main(args(fresh, twbias_data, tiny_model)) == 0
    assert sum(scored) == summary["counts"]["requests"]
    again = json.loads((fresh / "summary.json").read_text(encoding="utf-8"))
    for key in ("female", "male"):
        for ptype in ("0", "1", "2"):
            resumed_stats = summary["metrics"]["gender"][key]["prompts"][ptype]
            fresh_stats = again["metrics"]["gender"][key]["prompts"][ptype]
            for name in ("mean_origin_ppl", "mean_replace_ppl"):
                assert fresh_stats[name] == pytest.approx(resumed_stats[name], rel=1e-4)
