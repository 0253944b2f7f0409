"""The checkout holds no merge leftovers and no machine-local links (issue 34 point 5)."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SKIPPED = {".git", ".venv", "__pycache__", ".pytest_cache", ".mypy_cache", "site", "build", "dist"}


def _files() -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(REPO_ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED and not d.endswith(".egg-info")]
        found.extend(Path(folder) / name for name in files)
    return found


def test_no_merge_leftovers_are_in_the_tree():
    leftovers = [str(p.relative_to(REPO_ROOT)) for p in _files() if p.suffix in {".orig", ".rej"}]
    assert not leftovers, f"merge leftovers: {leftovers}"


def test_no_file_of_the_tree_is_a_link_out_of_it():
    outside = []
    for path in _files():
        if path.is_symlink() and REPO_ROOT not in path.resolve().parents:
            outside.append(str(path.relative_to(REPO_ROOT)))
    assert not outside, f"links that point out of the checkout: {outside}"
