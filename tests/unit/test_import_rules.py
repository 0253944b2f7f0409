"""The import rules that import-linter cannot say (its contracts, in pyproject.toml, are test_import_contracts.py):
importing culturebias loads no model runtime, modules never import relatively, and only the name culturebias is installed."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LAYERS = ("domain", "ports", "application", "adapters", "bootstrap", "testing")


def relative_imports(root: Path) -> list[str]:
    """Relative imports in the package's layers: every module names ``culturebias.*`` in full."""
    found = []
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            found += [
                f"{path.relative_to(root)}:{node.lineno} relative import {'.' * node.level}{node.module or ''}"
                for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.level > 0
            ]
    return found


def test_modules_import_the_culturebias_name_never_relatively():
    assert relative_imports(ROOT) == []


def test_the_relative_import_check_finds_one(tmp_path):
    (tmp_path / "domain").mkdir()
    (tmp_path / "domain" / "bad.py").write_text("from .errors import ConfigError\n", encoding="utf-8")
    assert relative_imports(tmp_path) == ["domain/bad.py:1 relative import .errors"]


def test_importing_culturebias_loads_no_heavy_runtime():
    code = (
        "import sys, importlib, pkgutil, culturebias\n"
        "import culturebias.domain, culturebias.ports, culturebias.application, culturebias.bootstrap.cli\n"
        "import culturebias.bootstrap.container, culturebias.application.run_benchmark\n"
        "for m in pkgutil.walk_packages(culturebias.domain.__path__, 'culturebias.domain.'):\n"
        "    importlib.import_module(m.name)\n"
        "import culturebias.bootstrap.libra_build_wiring, culturebias.application.libra_build.build\n"
        "import culturebias.adapters.libra_build.components, culturebias.adapters.libra_build.corpus.steps\n"
        "heavy = [m for m in ('torch', 'transformers', 'onnxruntime', 'httpx', 'umap', 'sklearn', 'mlxtend')\n"
        "         if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_installed_layout_claims_only_the_culturebias_name():
    import culturebias.domain

    assert Path(culturebias.domain.__file__).resolve().parent == (ROOT / "domain").resolve() or "site-packages" in culturebias.domain.__file__
    for bare in ("domain", "ports", "adapters", "application", "bootstrap"):
        spec = __import__("importlib.util").util.find_spec(bare)
        assert spec is None, f"a bare top-level module {bare!r} is importable: {spec}"
