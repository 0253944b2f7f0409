"""TWBias attribute categories count a sentence in every category of its attributes, once per T-A pair, as the
authors' code does (PROTOCOLS §1.7); counting it once per category stays an option."""

from __future__ import annotations

from pathlib import Path

import pytest

from culturebias.bootstrap.cli import main
from culturebias.domain.twbias.summary import TWBiasSummary

pytestmark = pytest.mark.shared_data

BREEZE = "Breeze-7B-Instruct-v0_1"


@pytest.fixture(autouse=True)
def _restore_logging():
    yield
    import structlog

    structlog.reset_defaults()


@pytest.fixture
def breeze(twbias_data: Path) -> Path:
    path = twbias_data.parent / "twbias-results" / BREEZE
    if not path.is_dir():
        pytest.skip(f"the TWBias authors' result files are not at {path} (CI has them)")
    return path


def female_family(out: Path, data: Path, folder: Path, *extra: str) -> tuple[TWBiasSummary, tuple[float, float, int]]:
    argv = [
        "run", "twbias", "--out", str(out), "--set", "model.backend=replay", "--set", f"model.path={folder}",
        "--set", f"data.path={data}", "--set", "protocol.groups=gender", "--set", "store.backend=memory", *extra,
    ]  # fmt: skip
    assert main(argv) == 0
    summary = TWBiasSummary.model_validate_json((out / "summary.json").read_text(encoding="utf-8"))
    family = (summary.metrics.gender or {})["female"].by_category["Family"]
    return summary, (round(family.bias_ratio, 3), round(family.effect_size, 3), family.n_rows)


def test_breezes_female_family_row_is_the_authors_by_default_and_differs_when_counted_once(tmp_path, twbias_data, breeze):
    summary, exploded = female_family(tmp_path / "default", twbias_data, breeze)
    assert summary.metrics.analysis.category_rows == "exploded"
    assert exploded == (0.1, 0.563, 15)  # the authors' way: a sentence once per attribute pair
    _, unique = female_family(tmp_path / "once", twbias_data, breeze, "--set", "protocol.category_rows=unique")
    assert unique == (0.0, 0.0, 13)
    report = (tmp_path / "default" / "report.md").read_text(encoding="utf-8")
    assert "once per T-A pair in every category" in report
    # the headline (overall) does not depend on how categories count
    assert round(summary.metrics.gender["female"].effect_size, 3) == 0.096
