"""The documented gate (README tour, docs/gating.md) is one a content-blind model cannot pass.

A scripted model that always answers "A" (by position, never reading the question) fails it;
a model that answers from the context passes it, so the test can tell the two apart.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

import culturebias
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.testing.context import run_with_fakes
from culturebias.testing.kobbq_runs import policy_generator
from culturebias.testing.scripted import ScriptedGenerator

ROOT = Path(__file__).resolve().parents[2]
# the documented protocol asks every option order, so each option stands in each position once
OPTIONS = {"mode": "generate", "prompts": "1", "permutations": "0,1,2", "statistics": False}


def documented_gate(page: Path) -> dict[str, object]:
    """The page's `# gate.toml` block, less its baseline criteria (they need --baseline)."""
    block = re.search(r"```toml\n(# gate\.toml\n.*?)```", page.read_text(encoding="utf-8"), re.S)
    assert block, f"{page} has no gate.toml example"
    policy = tomllib.loads(block.group(1))
    policy["criterion"] = [c for c in policy["criterion"] if "not_worse_than_baseline_by" not in c]
    return policy


def _run(root: Path, name: str, generator: ScriptedGenerator) -> Path:
    out = root / name
    out.mkdir(parents=True)
    store = SQLiteResultStore(out / "results.sqlite")
    try:
        run_with_fakes("kobbq", options=OPTIONS, out_dir=out, store=store, generator=generator)
    finally:
        store.close()
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gate")
    return {
        "by-position": _run(root, "by-position", ScriptedGenerator(lambda request, rendered: "A", name="first-letter")),
        "reads-context": _run(root, "reads-context", policy_generator("correct", "reader")),
    }


@pytest.mark.parametrize("page", ["README.md", "docs/gating.md"])
def test_a_model_answering_by_position_fails_the_documented_gate(page, runs):
    policy = documented_gate(ROOT / page)
    assert {c["metric"] for c in policy["criterion"]} >= {"diff_bias_amb", "acc_dis"}
    verdict = culturebias.check(policy, [runs["by-position"]])
    by_metric = {c.criterion.metric: c for c in verdict.criteria}
    # Diff-bias alone would let it through; a validity rule that finds it content-blind makes its scores
    # "not measured", and a criterion on a value not measured is inconclusive: never a pass either way.
    assert by_metric["diff_bias_amb"].outcome in ("pass", "inconclusive")
    assert by_metric["acc_dis"].outcome in ("fail", "inconclusive"), by_metric["acc_dis"].reason
    if by_metric["acc_dis"].value is not None:  # measured: right about one time in three, far below 0.5
        assert by_metric["acc_dis"].outcome == "fail" and abs(by_metric["acc_dis"].value - 1 / 3) < 0.02
    assert verdict.outcome != "pass" and verdict.exit_code() != 0


@pytest.mark.parametrize("page", ["README.md", "docs/gating.md"])
def test_a_model_answering_from_the_context_passes_it(page, runs):
    verdict = culturebias.check(documented_gate(ROOT / page), [runs["reads-context"]])
    assert verdict.outcome == "pass", [c.reason for c in verdict.criteria]


def test_the_gherkin_form_of_the_documented_gate_reads_as_the_same_criteria(tmp_path):
    from culturebias.bootstrap.check import load_policy

    page = (ROOT / "docs" / "gating.md").read_text(encoding="utf-8")
    feature = tmp_path / "gate.feature"
    feature.write_text(re.search(r"```gherkin\n(.*?)```", page, re.S).group(1), encoding="utf-8")
    criteria = load_policy(feature).criteria
    toml = documented_gate(ROOT / "docs" / "gating.md")["criterion"]
    thresholds = {(c.metric, c.at_most, c.at_least) for c in criteria if c.not_worse_than_baseline_by is None}
    assert thresholds == {(c["metric"], c.get("at_most"), c.get("at_least")) for c in toml}
