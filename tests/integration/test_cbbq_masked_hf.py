"""CBBQ with an encoder (paper §5.8, Fig. 8): a tiny random masked LM through the HF pseudo-log-likelihood port."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from culturebias.adapters.cbbq.files import CBBQFiles  # noqa: E402
from culturebias.adapters.hf.backend import create_backend  # noqa: E402
from culturebias.adapters.hf.options import HFOptions  # noqa: E402
from culturebias.bootstrap.cli import main  # noqa: E402
from culturebias.domain.bbq.masked_choice import best_option, option_text  # noqa: E402
from culturebias.domain.requests import PseudoLoglikelihoodRequest  # noqa: E402
from culturebias.testing.tiny_models import cached_tiny_masked_lm  # noqa: E402


def test_auto_mode_scores_every_option_of_a_masked_lm_and_picks_the_best_mean(tmp_path):
    model = cached_tiny_masked_lm()
    out = tmp_path / "out"
    args = ["run", "cbbq", "--out", str(out), "--set", "model.backend=hf", "--set", f"model.path={model}"]
    args += ["--set", "model.kind=masked", "--set", "model.device=cpu", "--set", "run.progress=false"]
    args += ["--set", "protocol.categories=gender", "--set", "protocol.limit=3"]
    assert main(args) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    metrics = summary["metrics"]
    assert metrics["mode"] == "masked" and metrics["answering"]["requested"] == "auto"
    assert summary["counts"]["answers"] == 6 and summary["counts"]["out_of_choice"] == 0
    assert "pseudo_scorer" in summary["model"]
    # the run's choices are the best mean per token of the port's pseudo-log-likelihoods
    scorer = create_backend(
        HFOptions(backend="hf", path=str(model), device="cpu", kind="masked"), Path(tempfile.mkdtemp())
    ).pseudo_scorer()
    items = {i.sample_id: i for i in CBBQFiles(None).load().items}
    for line in summary["details"]["predictions"]:
        sample_id, _, _, chosen, _ = line.split("|")
        item = items[sample_id]
        results = scorer.pseudo_loglikelihood(
            [PseudoLoglikelihoodRequest(*option_text(item.context, item.question, o)) for o in item.options]
        )
        assert int(chosen) == best_option([r.logprob for r in results], [r.n_tokens for r in results])
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "answering mode: **masked**" in report and "the papers generated their answers" in report
