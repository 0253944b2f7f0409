"""Issue 15 end to end: `culturebias build libra` on the fixture corpus with the default components
(MiniLM expansion, UMAP + HDBSCAN), then `culturebias run libra` on its output with the embedded model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from culturebias.bootstrap.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("smollm2_installed")]

FIXTURE = Path(__file__).parents[1] / "fixtures" / "libra_corpus"


def test_built_triplets_run_through_libra_with_the_embedded_model(tmp_path):
    pytest.importorskip("umap")
    pytest.importorskip("mlxtend")
    data = tmp_path / "data"
    args = ["build", "libra", "--corpus", str(FIXTURE / "corpus"), "--seeds", str(FIXTURE / "seeds.json"), "--out", str(data),
            "--set", "llm=embedded:smollm2-135m-instruct"]
    assert main(args) == 0
    report = json.loads((data / "build_report.json").read_text(encoding="utf-8"))
    assert report["steps_run"] == ["clean", "expand", "cluster", "search", "perturb", "review"]
    assert report["clusters"] > 0 and (data / "clusters.png").read_bytes()[:4] == b"\x89PNG"
    assert len(report["triplets_per_group"]) == 4
    # The LLM was asked to map clusters to groups; a 135M model's replies are parsed or counted, never guessed.
    use = json.loads((data / "steps" / "cluster.json").read_text(encoding="utf-8"))["result"]["mapping_use"]
    assert use["asked"] > 0 and use["asked"] == use["parsed"] + use["unparseable"]
    out = tmp_path / "run"
    run = ["run", "libra", "--out", str(out), "--set", f"data.path={data}", "--set", "protocol.limit=6",
           "--set", "run.progress=false", "--set", "run.report=none"]
    assert main(run) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["counts"]["triplets"] == 6
    assert summary["model"]["scorer"]["model"] == "embedded:smollm2-135m-instruct"
