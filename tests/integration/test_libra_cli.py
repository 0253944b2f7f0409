"""``culturebias run libra`` end to end: tiny random causal and masked models, and the embedded default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from culturebias.testing.tiny_models import cached_tiny_causal_lm, cached_tiny_masked_lm  # noqa: E402
from culturebias.bootstrap.cli import main  # noqa: E402
from culturebias.domain.libra.summary import LibraSummary  # noqa: E402
from culturebias.adapters.libra.files import LibraFiles  # noqa: E402

HEADLINE = {"lms", "ss", "icat_local", "jsd", "bbs", "eicat"}


def run_cli(out: Path, *assignments: str) -> dict:
    args = ["run", "libra", "--out", str(out), "--set", "run.progress=false"]
    for assignment in assignments:
        args += ["--set", assignment]
    assert main(args) == 0
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


def check_outputs(out: Path, summary: dict) -> None:
    typed = LibraSummary.model_validate(summary)  # every key known, nothing missing
    assert typed.as_dict() == summary
    metrics = summary["metrics"]
    assert HEADLINE <= set(metrics["overall"])
    for block in list(metrics["by_category"].values()) + list(metrics["by_group"].values()):
        assert HEADLINE <= set(block)
    counts = summary["counts"]
    assert counts["valid_triplets"] + counts["invalid_triplets"] == counts["triplets"] >= 20
    assert len(summary["details"]["triplets"]["stereotyped"]) == counts["triplets"]
    assert (out / "report.md").is_file()
    assert (out / "libra_likelihoods.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_causal_model_with_the_knowledge_boundary(tmp_path):
    model = cached_tiny_causal_lm()
    summary = run_cli(
        tmp_path, f"model.path={model}", "protocol.embedder=bag-of-words", "protocol.definition_max_tokens=8"
    )
    check_outputs(tmp_path, summary)
    assert summary["metrics"]["model_type"] == "causal"
    assert summary["counts"]["local_words_checked"] > 0
    assert summary["model"]["scorer"]["kind"] == "causal" and "generator" in summary["model"]
    # A random model defines nothing well: its misunderstood words invalidate triplets.
    assert summary["counts"]["invalid_triplets"] > 0
    assert summary["metrics"]["overall"]["bbs"] is not None


def test_a_masked_model_switches_to_pseudo_log_likelihood(tmp_path):
    model = cached_tiny_masked_lm()
    summary = run_cli(tmp_path, "model.kind=masked", f"model.path={model}")
    check_outputs(tmp_path, summary)
    assert summary["metrics"]["model_type"] == "masked"
    assert summary["model"]["pseudo_scorer"]["kind"] == "masked"
    assert summary["metrics"]["overall"]["eicat"] is None  # a masked LM cannot state definitions


def test_bad_protocol_settings_are_reported_not_raised(tmp_path, capsys):
    assert main(["run", "libra", "--out", str(tmp_path), "--set", "protocol.jsd_bins=zero"]) == 2
    assert "jsd_bins" in capsys.readouterr().err


@pytest.mark.slow
def test_the_embedded_default_runs_with_no_configuration(tmp_path):
    summary = run_cli(tmp_path, "protocol.definition_max_tokens=24")
    check_outputs(tmp_path, summary)
    assert summary["model"]["scorer"]["model"].startswith("embedded:")
    assert summary["counts"]["local_words_checked"] >= 15


def test_stereoset_beside_the_triplets_gives_the_papers_icat_column(tmp_path):
    """A masked LM with StereoSet's mean over the modified span, on a data folder holding StereoSet's dev.json."""
    root = Path(__file__).parents[2]
    data = tmp_path / "data"
    data.mkdir()
    (data / "triplets.jsonl").write_bytes((root / "adapters/bundled/libra/triplets.jsonl").read_bytes())
    (data / "dev.json").write_bytes((root / "tests/fixtures/stereoset/dev.json").read_bytes())
    out = tmp_path / "out"
    summary = run_cli(
        out, "model.kind=masked", f"model.path={cached_tiny_masked_lm()}", f"data.path={data}",
        "protocol.masked_likelihood=stereoset_mean",
    )
    check_outputs(out, summary)
    metrics = summary["metrics"]
    assert metrics["likelihood"] == "masked_stereoset_mean" and metrics["comparison"] is None
    assert "masked LM generates no text" in metrics["bbs_not_applicable"]
    stereoset = metrics["stereoset"]
    assert stereoset["file"] == "dev.json"
    assert stereoset["overall"]["items"] == 6 and stereoset["overall"]["targets"] == 5
    assert set(stereoset["by_split"]) == {"intrasentence", "intersentence"}
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## StereoSet (the paper's iCAT column)" in report and "local iCAT" in report
    assert "mean log P(t | U) over the modified span" in report and "not applicable" in report


def test_a_masked_model_states_meanings_by_choice_when_asked(tmp_path):
    summary = run_cli(
        tmp_path, "model.kind=masked", f"model.path={cached_tiny_masked_lm()}", "protocol.masked_meaning=choice",
        "protocol.limit=6", "protocol.meaning_choices=2", "run.report=none",
    )
    LibraSummary.model_validate(summary)
    metrics, counts = summary["metrics"], summary["counts"]
    assert metrics["comparison"] == "masked_choice" and metrics["bbs_not_applicable"] is None
    assert counts["local_words_checked"] > 0 and metrics["overall"]["bbs"] is not None
    checked = [w for w in summary["details"]["local_words"] if w["understood"] is not None]
    # the "definition" a masked LM states is the glossary definition it ranked first
    glossary = {entry.definition for entry in LibraFiles(None).load().glossary}
    assert all(w["model_definition"] in glossary for w in checked)
    assert all((w["score"] > 0) == w["understood"] for w in checked if w["score"] is not None)
