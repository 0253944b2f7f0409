"""What the README cites ships with the repository: the measurement contract, the licence, working links."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from culturebias.bootstrap.registry import registry

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PROTOCOLS = (ROOT / "docs" / "PROTOCOLS.md").read_text(encoding="utf-8")


def test_the_licence_pyproject_names_is_in_the_repository():
    assert tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["license"] == "Apache-2.0"
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
    assert len(text.splitlines()) > 150  # the full text, not a pointer to it


def test_every_relative_link_of_the_readme_and_the_docs_points_into_the_repository():
    for name, text, base in (("README.md", README, ROOT), ("docs/PROTOCOLS.md", PROTOCOLS, ROOT / "docs")):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            resolved = (base / target).resolve()
            assert resolved.is_relative_to(ROOT.resolve()), f"{name} links outside the repository: {target}"
            assert resolved.exists(), f"{name} links to a missing file: {target}"
    assert "docs/PROTOCOLS.md" in README and "shared/spec" not in README


@pytest.mark.parametrize("benchmark", ["twbias", "kobbq", "cbbq", "mcbe", "libra"])
def test_the_protocols_document_names_every_option_of_the_code(benchmark):
    options = registry().benchmark(benchmark).options_model().model_fields
    missing = [f"protocol.{name}" for name in options if f"protocol.{name}" not in PROTOCOLS]
    assert missing == []


def test_the_documented_defaults_are_the_code_s():
    from culturebias.domain.cbbq.options import CBBQOptions
    from culturebias.domain.kobbq.options import KoBBQOptions
    from culturebias.domain.libra.options import LibraOptions
    from culturebias.domain.mcbe.options import McBEOptions
    from culturebias.domain.twbias.options import TWBiasOptions

    assert "`protocol.min_pairs`\n   (10)" in PROTOCOLS and TWBiasOptions().min_pairs == 10
    assert "The default 0.49\n    is calibrated" in PROTOCOLS and LibraOptions().similarity_threshold == 0.49
    assert "`protocol.overall=category_mean` (default" in PROTOCOLS and CBBQOptions().overall == "category_mean"
    assert "`protocol.w1=0.4`, `protocol.w2=0.6`" in PROTOCOLS and (CBBQOptions().w1, CBBQOptions().w2) == (0.4, 0.6)
    assert "`protocol.pc_decay=paper` (r = 2e/3, default)" in PROTOCOLS and McBEOptions().pc_decay == "paper"
    assert "`protocol.judge_probe` (8)" in PROTOCOLS and McBEOptions().judge_probe == 8
    assert "`protocol.aggregate=pooled` (default" in PROTOCOLS and KoBBQOptions().aggregate == "pooled"
    assert "(`protocol.category_rows=exploded`, default" in PROTOCOLS and TWBiasOptions().category_rows == "exploded"
    assert "`5_evaluation` (default)" in PROTOCOLS and KoBBQOptions().evaluator == "5_evaluation"
    assert "`table7` (default" in PROTOCOLS and McBEOptions().prompt_set == ["table7"]
    assert "`twbias-inst`" in PROTOCOLS and "are not offered" not in PROTOCOLS


def test_the_readme_has_a_troubleshooting_section_and_timings_for_every_benchmark():
    assert "\n## Troubleshooting\n" in README
    timings = README.split("### Timings on the embedded model", 1)[1].split("\n## ", 1)[0]
    for benchmark in ("twbias", "kobbq", "cbbq", "mcbe", "libra"):
        assert f"| {benchmark} |" in timings
