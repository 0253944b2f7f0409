"""The import contracts of pyproject.toml (``[tool.importlinter]``): layers, independence, no circles.

import-linter checks them on the import graph of every module (imports inside functions too);
this test runs it, so the suite (and CI) fails on a broken contract.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

if importlib.util.find_spec("importlinter") is None and os.environ.get("CI") != "true":  # CI: a missing linter fails
    pytest.skip("import-linter is not installed: pip install -e '.[test]'", allow_module_level=True)


def lint_imports(config: Path, cwd: Path, pythonpath: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    command = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"]
    return subprocess.run([*command, "--no-cache", str(config)], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_every_import_contract_is_kept():
    result = lint_imports(ROOT / "pyproject.toml", ROOT)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " 0 broken" in result.stdout


def test_a_broken_contract_fails_the_check(tmp_path):
    package = tmp_path / "hexprobe"
    for layer in ("domain", "adapters"):
        (package / layer).mkdir(parents=True)
        (package / layer / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "adapters" / "store.py").write_text("VALUE = 1\n", encoding="utf-8")
    (package / "domain" / "model.py").write_text("def f():\n    from hexprobe.adapters import store\n", encoding="utf-8")
    config = tmp_path / "contracts.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "hexprobe"\n\n[[tool.importlinter.contracts]]\nname = "layers"\n'
        'type = "layers"\nlayers = ["hexprobe.adapters", "hexprobe.domain"]\n',
        encoding="utf-8",
    )
    result = lint_imports(config, tmp_path, pythonpath=str(tmp_path))
    assert result.returncode != 0
    assert "hexprobe.domain.model -> hexprobe.adapters.store" in result.stdout
