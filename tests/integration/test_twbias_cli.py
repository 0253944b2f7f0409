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
        "--set", "protocol.min_pairs=2",  # a few sentences test the pipeline: fewer than the default minimum sample (10)
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


@pytest.fixture(scope="module")
def plain_model() -> Path:
    """A tiny causal LM whose tokenizer has no chat template (a base model)."""
    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    return cached_tiny_causal_lm(chat_template=False)


def template_run(out: Path, data: Path, model: Path, *extra: str) -> int:
    return main(args(out, data, model, "--set", "protocol.prompt_types=0,00,1", "--set", "protocol.limit=3", *extra))


def test_a_model_without_a_template_runs_with_the_builtin_plain_template(tmp_path, twbias_data, plain_model):
    assert template_run(tmp_path / "refused", twbias_data, plain_model) == 4  # a chat template is needed
    out = tmp_path / "plain"
    assert template_run(out, twbias_data, plain_model, "--set", "model.chat_template=twbias-plain") == 0
    summary = TWBiasSummary.model_validate_json((out / "summary.json").read_text(encoding="utf-8"))
    assert summary.metrics.prompt_types == ["0", "00", "1"]
    assert summary.metrics.analysis.t_sign == "origin_minus_replace" and summary.metrics.analysis.replace_aggregate == "mean"
    female = (summary.metrics.gender or {})["female"]
    assert female.prompts["1"].n == 3 and female.prompts["1"].mean_origin_ppl > 1.0


def test_the_template_enters_the_model_identity_and_so_every_cache_key(tmp_path, twbias_data, plain_model):
    same = tmp_path / "same.jinja"
    from culturebias.adapters.hf.chat_templates import TWBIAS_PLAIN

    same.write_text(TWBIAS_PLAIN, encoding="utf-8")
    other = tmp_path / "other.jinja"
    other.write_text(TWBIAS_PLAIN.replace("USER:", "User:"), encoding="utf-8")
    identities = {}
    for name, setting in (("builtin", "twbias-plain"), ("same", str(same)), ("other", str(other))):
        out = tmp_path / name
        assert template_run(out, twbias_data, plain_model, "--set", f"model.chat_template={setting}", "--set", "protocol.prompt_types=1") == 0
        summary = TWBiasSummary.model_validate_json((out / "summary.json").read_text(encoding="utf-8"))
        assert summary.model.scorer is not None
        identities[name] = summary.model.scorer
    assert identities["builtin"].cache_key() == identities["same"].cache_key()  # the same text: the same scores
    assert identities["builtin"].tokenizer != identities["other"].tokenizer
    assert identities["builtin"].cache_key() != identities["other"].cache_key()


def test_a_template_file_that_does_not_render_is_a_data_error_naming_file_and_line(tmp_path, twbias_data, plain_model, capsys):
    broken = tmp_path / "broken.jinja"
    broken.write_text("USER: {{ messages[0]['content'] }}\n{% if add_generation_prompt %}ASSISTANT:", encoding="utf-8")
    assert template_run(tmp_path / "out", twbias_data, plain_model, "--set", f"model.chat_template={broken}") == 3
    err = capsys.readouterr().err
    assert str(broken) in err and "template line" in err and "model.chat_template" in err
    assert "Traceback" not in err
