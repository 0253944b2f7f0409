"""KoBBQ and CBBQ with no model configured: the embedded default (SmolLM2-135M-Instruct).

Slow: loads the real 135M model (converted once into the user cache).
"""

from __future__ import annotations

import json

import pytest

from culturebias.bootstrap.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("smollm2_installed")]


@pytest.mark.parametrize("benchmark", ["kobbq", "cbbq"])
def test_the_embedded_default_answers_in_likelihood_mode_when_asked(tmp_path, benchmark):
    """protocol.mode=auto would generate (the model has a chat template); likelihood is asked for here."""
    args = ["run", benchmark, "--out", str(tmp_path), "--set", "run.progress=false", "--set", "protocol.limit=4"]
    args += ["--set", "protocol.mode=likelihood"]
    if benchmark == "kobbq":
        args += ["--set", "protocol.prompts=1", "--set", "protocol.statistics=false"]
    assert main(args) == 0
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["mode"] == "likelihood" and summary["metrics"]["chat_template"] is True
    assert summary["model"]["scorer"]["model"] == "embedded:smollm2-135m-instruct"
    assert summary["counts"]["out_of_choice"] == 0
    expected = 4 * 3 if benchmark == "kobbq" else 4 * 2 * 4  # kobbq: 3 orders; cbbq: 4 categories × 2 contexts
    assert summary["counts"]["answers"] == expected
    assert "A small model ran" in (tmp_path / "report.md").read_text(encoding="utf-8")
