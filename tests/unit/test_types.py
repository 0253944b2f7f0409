"""mypy (pyproject ``[tool.mypy]``: pydantic plugin, strict flags for domain/ and ports/) over domain/ and ports/.

The package is the repository root under the name ``culturebias``, so mypy checks it through a
link of that name; the suite (and CI) fails on any type error in the pure layers. The other layers
are not yet clean (README "Typing"), so their modules are read for types but not reported.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

if importlib.util.find_spec("mypy") is None and os.environ.get("CI") != "true":  # CI: a missing checker fails
    pytest.skip("mypy is not installed: pip install -e '.[test]'", allow_module_level=True)


def run_mypy(tmp_path: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "culturebias").symlink_to(ROOT, target_is_directory=True)
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache"), *targets]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=900)


def test_domain_and_ports_type_check_strictly(tmp_path):
    result = run_mypy(tmp_path, "--follow-imports=silent", "-p", "culturebias.domain", "-p", "culturebias.ports")
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "Success: no issues found" in result.stdout


def test_domain_is_checked_strictly(tmp_path):
    probe = ROOT / "domain" / "_strict_probe.py"
    probe.write_text("def untyped(x):\n    return x\n", encoding="utf-8")
    try:
        result = run_mypy(tmp_path, "--follow-imports=silent", "-m", "culturebias.domain._strict_probe")
    finally:
        probe.unlink()
    assert result.returncode == 1 and "no-untyped-def" in result.stdout, result.stdout
