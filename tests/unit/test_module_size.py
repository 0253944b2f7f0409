"""Every module of the package (tests/ aside) stays under 500 lines: a newcomer finds code by module names, and a
module that grows past that holds more than its name says (split it along a seam, as adapters/openai/ and
testing/openai_server*.py are)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 500
SKIPPED = {"tests", ".venv", ".git", "__pycache__", ".pytest_cache", ".mypy_cache", "site", "build", "dist"}


def modules(root: Path) -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED and not d.endswith(".egg-info")]
        found.extend(Path(folder) / name for name in files if name.endswith(".py"))
    return found


def too_long(root: Path) -> list[str]:
    sizes = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in modules(root)}
    return sorted(f"{path.relative_to(root)} ({lines} lines)" for path, lines in sizes.items() if lines >= LIMIT)


def test_every_module_outside_tests_is_under_500_lines():
    assert modules(ROOT), "no modules found: the walk is broken"
    assert too_long(ROOT) == [], f"split these modules along a seam (limit {LIMIT} lines): {too_long(ROOT)}"


def test_the_check_names_a_long_module_and_leaves_tests_alone(tmp_path):
    (tmp_path / "adapters").mkdir()
    (tmp_path / "adapters" / "big.py").write_text("x = 1\n" * LIMIT, encoding="utf-8")
    (tmp_path / "adapters" / "small.py").write_text("x = 1\n" * (LIMIT - 1), encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_big.py").write_text("x = 1\n" * 2 * LIMIT, encoding="utf-8")
    assert too_long(tmp_path) == [f"{Path('adapters') / 'big.py'} ({LIMIT} lines)"]
