"""Typed for embedding: the package ships py.typed, and the docs' embedding example (docs/api.md) passes mypy."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
API_PAGE = ROOT / "docs" / "api.md"


def readme_api_example() -> str:
    match = re.search(r"<!-- api-example -->\s*```python\n(.*?)```", API_PAGE.read_text(encoding="utf-8"), re.DOTALL)
    assert match, "docs/api.md has no <!-- api-example --> python block"
    return match.group(1)


def test_the_package_ships_its_type_hints():
    assert (ROOT / "py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["culturebias"]
    assert any(r.startswith("mypy") for r in config["project"]["optional-dependencies"]["test"])


def _mypy(source: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[test]')")
    (tmp_path / "path").mkdir()
    (tmp_path / "path" / "culturebias").symlink_to(ROOT, target_is_directory=True)  # the checkout as the package
    script = tmp_path / "example.py"
    script.write_text(source, encoding="utf-8")
    env = {"MYPYPATH": str(tmp_path / "path"), "PATH": "", "HOME": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), str(script)],
        capture_output=True, text=True, env={**env, "PYTHONPATH": ":".join(p for p in sys.path if p)}, timeout=900,
    )  # fmt: skip


def test_the_readme_embedding_example_passes_mypy(tmp_path):
    done = _mypy(readme_api_example(), tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_sees_the_summary_types_and_rejects_a_wrong_field(tmp_path):
    """The check can fail: a misspelt metric of the typed summary is an error."""
    wrong = readme_api_example().replace("summary.metrics.overall.icat_local", "summary.metrics.overall.icat_locale")
    done = _mypy(wrong, tmp_path)
    assert done.returncode == 1 and "icat_locale" in done.stdout, done.stdout + done.stderr


