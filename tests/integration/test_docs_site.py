"""The docs site builds with ``mkdocs build --strict``: no broken link, no missing page, every generated table.

Skipped only where MkDocs is not installed and ``CI`` is not set (``pip install -e '.[docs]'``;
``scripts/install.sh --test`` installs it); in CI a missing MkDocs fails.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from culturebias.bootstrap.settings_reference import setting_keys

ROOT = Path(__file__).resolve().parents[2]
HAVE_MKDOCS = all(importlib.util.find_spec(m) is not None for m in ("mkdocs", "material", "mkdocstrings_handlers.python"))

if not HAVE_MKDOCS and not os.environ.get("CI"):
    pytest.skip("MkDocs is not installed (pip install -e '.[docs]', or bash scripts/install.sh --test)", allow_module_level=True)


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` as a user runs it: no PYTHONPATH (the hook finds this checkout itself)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True, text=True, timeout=600, env={**env, "NO_MKDOCS_2_WARNING": "1"}, cwd=config.parent,
    )  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert HAVE_MKDOCS, "CI is set but MkDocs is not installed: scripts/install.sh --test installs the docs extra"
    out = tmp_path_factory.mktemp("site")
    done = build(ROOT / "mkdocs.yml", out)
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def _text(page: Path) -> str:
    return re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))


def test_the_site_builds_strictly_with_every_page(site):
    for page in ("index", "getting-started", "gating", "configuration", "api", "architecture", "PROTOCOLS", "EXPORT_SCHEMA", "changelog"):
        assert (site / page / "index.html").is_file() or (page == "index" and (site / "index.html").is_file()), page
    for benchmark in ("twbias", "kobbq", "cbbq", "mcbe", "libra"):
        assert (site / "benchmarks" / benchmark / "index.html").is_file()
    assert (site / "notes" / "index.html").is_file()


def test_the_configuration_page_lists_every_setting_key(site):
    text = _text(site / "configuration" / "index.html")
    missing = [key.key for key in setting_keys() if key.key.replace("<", "&lt;").replace(">", "&gt;") not in text]
    assert missing == []
    assert "<!-- generated:" not in (site / "configuration" / "index.html").read_text(encoding="utf-8")


def test_the_api_page_is_rendered_from_the_docstrings(site):
    text = _text(site / "api" / "index.html")
    assert "Run one benchmark and return its typed summary" in text  # evaluate's docstring


def test_a_broken_link_fails_the_build(tmp_path):
    """The strict build is what catches a broken link: a copy of the site with one fails."""
    docs = tmp_path / "docs"
    for page in (ROOT / "docs").rglob("*"):
        target = docs / page.relative_to(ROOT / "docs")
        if page.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif page.suffix == ".md":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    (docs / "gating.md").write_text("# Gating\n\nSee [the missing page](no-such-page.md).\n", encoding="utf-8")
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    config = config.replace("  - docs/hooks.py", f"  - {ROOT / 'docs' / 'hooks.py'}").replace("docs_dir: docs", f"docs_dir: {docs}")
    config = re.sub(r"\n  - mkdocstrings:.*?(?=\nnav:)", "\n", config, flags=re.S)  # no API reference needed here
    (tmp_path / "mkdocs.yml").write_text(config, encoding="utf-8")
    (docs / "api.md").write_text("# Python API\n", encoding="utf-8")
    done = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr
