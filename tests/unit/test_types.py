"""mypy (pyproject ``[tool.mypy]``: pydantic plugin, strict flags for domain/ and ports/) over the whole package.

The package is the repository root under the name ``culturebias``, so mypy checks it through a
link of that name; the suite (and CI) fails on any type error anywhere in the package (tests/,
perf/ and scripts/ are not part of it). The model runtimes are read as ``Any`` (``follow_imports =
"skip"`` in the config), which keeps the check to a minute or so with a cold cache.
"""

from __future__ import annotations

import importlib.util
import os
import re
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


def test_the_whole_package_type_checks(tmp_path):
    result = run_mypy(tmp_path, "-p", "culturebias")
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "Success: no issues found" in result.stdout


def test_an_adapter_type_error_fails_the_check(tmp_path):
    probe = ROOT / "adapters" / "_type_probe.py"
    probe.write_text("def size() -> int:\n    return 'many'\n", encoding="utf-8")
    try:
        result = run_mypy(tmp_path, "--follow-imports=silent", "-m", "culturebias.adapters._type_probe")
    finally:
        probe.unlink()
    assert result.returncode == 1 and "return-value" in result.stdout, result.stdout


def test_domain_is_checked_strictly(tmp_path):
    probe = ROOT / "domain" / "_strict_probe.py"
    probe.write_text("def untyped(x):\n    return x\n", encoding="utf-8")
    try:
        result = run_mypy(tmp_path, "--follow-imports=silent", "-m", "culturebias.domain._strict_probe")
    finally:
        probe.unlink()
    assert result.returncode == 1 and "no-untyped-def" in result.stdout, result.stdout


def _package_lines():
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(("tests/", "perf/", "scripts/", ".")):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            yield f"{relative}:{number}", line, lines[number - 2] if number > 1 else ""


def test_every_type_ignore_says_why_on_its_line():
    bare = [where for where, line, _ in _package_lines() if re.search(r"type: ignore(\[[-\w, ]+\])?\s*$", line)]
    assert not bare, "a '# type: ignore[code]' needs a '# reason' after it: " + ", ".join(bare)


def test_every_any_says_why():
    """An ``Any`` in code has a comment on its line (or a comment line just above) saying what it stands for."""
    bare = []
    for where, line, above in _package_lines():
        code = line.split("#", 1)[0]
        if not re.search(r"\bAny\b", code) or re.match(r"\s*(from|import)\b", code) or re.search(r"\bAny (other|of)\b|``Any``", line):
            continue
        if "#" not in line and not above.strip().startswith("#"):
            bare.append(where)
    assert not bare, "an Any without its reason: " + ", ".join(bare)
