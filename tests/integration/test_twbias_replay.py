"""TWBias score replay: the authors' per-sentence PPLs of two real 7B models reproduce Table 4."""

from __future__ import annotations

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


# Paper Table 4 (gender): (bias ratio, effect size) per origin group, to the printed digits.
TABLE_4 = {
    "Breeze-7B-Instruct-v0_1": {"T1_male": (0.1, 0.085), "T2_female": (0.1, 0.096)},
    "Taiwan-LLM-7B-v2.0.1-chat": {"T1_male": (0.3, 0.136), "T2_female": (0.5, 0.092)},
}


@pytest.fixture
def results(twbias_data: Path) -> Path:
    path = twbias_data.parent / "twbias-results"
    if not path.is_dir():
        pytest.skip(f"the TWBias authors' result files are not at {path} (CI has them)")
    return path


def replay(out: Path, data: Path, folder: Path, *extra: str) -> TWBiasSummary:
    argv = [
        "run", "twbias", "--out", str(out),
        "--set", "model.backend=replay",
        "--set", f"model.path={folder}",
        "--set", f"data.path={data}",
        "--set", "protocol.groups=gender",
        "--set", "store.backend=memory",
        *extra,
    ]  # fmt: skip
    assert main(argv) == 0
    return TWBiasSummary.model_validate_json((out / "summary.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("model", sorted(TABLE_4))
def test_replaying_the_authors_ppls_reproduces_table_4(tmp_path, twbias_data, results, model):
    summary = replay(tmp_path, twbias_data, results / model)
    metrics = summary.metrics
    assert metrics.analysis.effect == "dz" and metrics.analysis.test == "paired"
    got = {
        block.origin: (round(block.bias_ratio, 1), round(block.effect_size, 3)) for block in (metrics.gender or {}).values()
    }
    assert got == TABLE_4[model]
    assert summary.counts.requests == 0  # nothing was asked of a model
    assert summary.counts.outliers_removed > 0  # the files are not yet filtered: §1.4 applies
    assert any("replayed" in note for note in summary.notes)
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "d_z" in report


def test_pooled_d_stays_available_and_gives_other_numbers(tmp_path, twbias_data, results):
    summary = replay(tmp_path, twbias_data, results / "Taiwan-LLM-7B-v2.0.1-chat", "--set", "protocol.effect=d")
    male = next(b for b in (summary.metrics.gender or {}).values() if b.origin == "T1_male")
    assert summary.metrics.analysis.effect == "d"
    assert male.bias_ratio == pytest.approx(0.3)
    assert round(male.effect_size, 3) != 0.136
