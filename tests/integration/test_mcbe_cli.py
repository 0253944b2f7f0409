"""``culturebias run mcbe`` end to end on a tiny random HF model (model and judge) and the embedded fixture."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402
from culturebias.bootstrap.cli import main  # noqa: E402
from culturebias.domain.mcbe.summary import McBESummary  # noqa: E402

SHORT = [
    "--set", "protocol.limit=2",  # the first two BEIs of each category
    "--set", "protocol.sc_max_new_tokens=6",
    "--set", "protocol.ss_max_new_tokens=4",
    "--set", "protocol.ba_max_new_tokens=8",
    "--set", "protocol.bs_max_new_tokens=4",
    "--set", "protocol.max_retries=1",
    "--set", "judge.max_retries=1",
    "--set", "protocol.judge_probe=0",  # judge every request: the stopping rule has its own tests
]


def _run(tmp_path, *extra: str) -> dict:
    model = cached_tiny_causal_lm(arch="llama")
    out = tmp_path / "out"
    argv = [
        "run", "mcbe", "--out", str(out),
        "--set", f"model.path={model}", "--set", "model.device=cpu", "--set", "model.batch_size=8",
        "--set", "run.progress=false", "--set", f"run.cache_dir={tmp_path / 'cache'}",
        *SHORT, *extra,
    ]
    assert main(argv) == 0
    text = (out / "summary.json").read_text(encoding="utf-8")
    # the file is a McBE summary, and reading it back writes the same JSON
    assert json.loads(McBESummary.model_validate_json(text).to_json()) == json.loads(text)
    return json.loads(text)


def test_run_mcbe_writes_summary_and_report(tmp_path):
    summary = _run(tmp_path)
    metrics, counts = summary["metrics"], summary["counts"]
    assert set(metrics["tasks"]) == {"pc", "sc", "ss", "ba", "bs"}
    assert set(metrics["categories"]) == {"gender", "region", "socioeconomic_status", "worldview"}
    for category, row in metrics["categories"].items():
        assert {"pc", "sc", "ss", "ba", "bs", "mean", "invalid"} <= set(row)
        for task in ("sc", "ba"):
            assert 0 <= row[task] <= 100
    # A random tiny model writes no number: no BS rating is readable, so BS and the overall have no score, and say why
    if counts["bs_invalid"] == counts["beis"]:
        assert metrics["tasks"]["bs"] is None and metrics["overall"] is None
        assert "BS has no score: every rating was unparseable" in summary["not_measured"]
    else:
        assert all(0 <= row["bs"] <= 100 for row in metrics["categories"].values())
    assert metrics["categories"]["worldview"]["pc"] is None and metrics["categories"]["worldview"]["ss"] is None
    assert 0 < metrics["categories"]["gender"]["pc"] <= 100
    # ordered pairs n·(n−1) of the first two BEIs: gender 2+6, region 6+6, socioeconomic_status 6+6
    assert counts["beis"] == 8 and counts["ss_asked"] == 8 + 12 + 12
    assert counts["ba_judge_requests"] == 8 * 4
    for key in ("ss_unparseable", "bs_invalid", "ba_judge_invalid"):
        assert key in counts
    # the judge defaults to the evaluated model
    assert metrics["judge"]["is_evaluated_model"] is True
    assert summary["model"]["judge"]["model"] == summary["model"]["generator"]["model"]
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "## The bias-analysis judge" in report and "the evaluated model itself" in report
    if metrics["overall"] is None:
        assert "Overall score: **not measured** (overall undefined: " in report and "BS has no score" in report
        assert "> **Not measured.** overall undefined" in report
    else:
        assert f"Overall score: **{metrics['overall']:.2f}**" in report
    assert (tmp_path / "out" / "mcbe_scores.png").exists()


def test_tasks_run_alone_from_the_command_line(tmp_path):
    summary = _run(tmp_path, "--set", "protocol.tasks=pc,ss", "--set", "protocol.pc_decay=released")
    assert set(summary["metrics"]["tasks"]) == {"pc", "ss"}
    assert summary["metrics"]["decay"]["pc"]["choice"] == "released"
    assert "judge" not in summary["model"] and "judge" not in summary["metrics"]


@pytest.mark.slow
def test_the_embedded_default_is_model_and_judge(tmp_path, smollm2_installed):
    """No model and no data configured: SmolLM2-135M-Instruct on the embedded fixture, judging itself."""
    out = tmp_path / "out"
    quick = ["--set", "protocol.limit=1", "--set", "protocol.ba_max_new_tokens=32", "--set", "judge.max_retries=1"]
    assert main(["run", "mcbe", "--out", str(out), "--set", "run.progress=false", *quick]) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["model"]["generator"]["model"] == "embedded:smollm2-135m-instruct"
    assert summary["metrics"]["judge"]["is_evaluated_model"] is True
    assert summary["metrics"]["judge"]["parameters"] < 1_000_000_000
    assert "not McBE data" in summary["data"]["source"]
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "This judge is small (135M parameters)" in report
