"""What the README and the docs site cite ships with the repository: the measurement contract, the licence, working links."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from culturebias.bootstrap.registry import registry

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PROTOCOLS = (ROOT / "docs" / "PROTOCOLS.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
GENERATED_PAGES = ("changelog.md", "notes/index.md")  # written by docs/hooks.py when the site is built


def test_the_licence_pyproject_names_is_in_the_repository():
    assert tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["license"] == "Apache-2.0"
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
    assert len(text.splitlines()) > 150  # the full text, not a pointer to it


def test_every_relative_link_of_the_readme_and_the_docs_points_into_the_repository():
    pages = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"), p.parent) for p in sorted(DOCS.rglob("*.md"))]
    for name, text, base in [("README.md", README, ROOT), ("CHANGELOG.md", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), ROOT), *pages]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            resolved = (base / target).resolve()
            assert resolved.is_relative_to(ROOT.resolve()), f"{name} links outside the repository: {target}"
            generated = resolved in {(DOCS / page).resolve() for page in GENERATED_PAGES}
            assert resolved.exists() or generated, f"{name} links to a missing file: {target}"
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
    from culturebias.domain.twbias.evaluation import FEW_PAIRS
    from culturebias.domain.twbias.options import TWBiasOptions

    assert "`protocol.min_pairs=N`** is the opt-in stricter rule (default off)" in PROTOCOLS
    assert TWBiasOptions().min_pairs is None and "(`FEW_PAIRS`" in PROTOCOLS and FEW_PAIRS == 10
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


def test_the_docs_have_a_troubleshooting_page_and_timings_for_every_benchmark():
    assert (DOCS / "troubleshooting.md").read_text(encoding="utf-8").startswith("# Troubleshooting\n")
    performance = (DOCS / "performance.md").read_text(encoding="utf-8")
    timings = performance.split("## Timings on the embedded model", 1)[1].split("\n## ", 1)[0]
    for benchmark in ("twbias", "kobbq", "cbbq", "mcbe", "libra"):
        assert f"| {benchmark} |" in timings


def test_the_readme_opens_with_the_set_up_commands_and_stays_short():
    """The README is the front door: install + main job, then the tests (the command .ci/run runs), first."""
    lines = README.splitlines()
    assert len(lines) <= 400
    first_blocks = README.split("\n## ", 1)[0]
    assert "bash scripts/install.sh && .venv/bin/culturebias run libra --out runs/libra" in first_blocks
    assert "bash scripts/install.sh --test" in first_blocks and ".venv/bin/pytest -q " in first_blocks
    assert '.venv/bin/pytest -q -m "not slow"' in first_blocks
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.rstrip().endswith(".venv/bin/pytest -q")


def test_every_page_of_the_docs_site_is_in_its_nav():
    """mkdocs.yml's nav names every page under docs/ (the release notes in docs/notes/ are listed by the hook)."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:\n", 1)[1]
    named = set(re.findall(r"([\w./-]+\.md)\s*$", nav, re.MULTILINE))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert {p for p in pages if not p.startswith("notes/")} <= named
    assert {"gating.md", "configuration.md", "api.md", "architecture.md", "PROTOCOLS.md", "EXPORT_SCHEMA.md"} <= named


def test_the_ci_example_installs_from_the_clone():
    """culturebias is not on PyPI: no page tells a reader to pip install it by name."""
    for path in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        if path.name != "troubleshooting.md":  # which quotes the command that fails, as its symptom
            assert not re.search(r"pip install ['\"]?culturebias\b", text), path
    gating = (DOCS / "gating.md").read_text(encoding="utf-8")
    assert "git clone" in gating and "scripts/install.sh" in gating
