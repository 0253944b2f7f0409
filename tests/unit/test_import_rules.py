"""The hexagon's import rules, checked on the source text of every module."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

RUNTIMES = {"torch", "transformers", "onnxruntime", "onnx", "optimum", "accelerate", "gguf", "safetensors"}
IO_LIBRARIES = {"httpx", "requests", "aiohttp", "urllib3", "openai", "sqlite3", "sqlalchemy", "psycopg", "psycopg2", "socket", "http"}
OUTER_LAYERS = {"culturebias.adapters", "culturebias.bootstrap", "culturebias.application"}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            found.append((node.lineno, "." * node.level + (node.module or "")))
    return found


def violations(layer: str, forbidden_roots: set[str], forbidden_prefixes: set[str]) -> list[str]:
    bad = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        for line, module in imported_modules(path):
            root = module.split(".")[0]
            if module.startswith("."):
                bad.append(f"{path.relative_to(ROOT)}:{line} relative import {module} (use culturebias.*)")
            elif root in forbidden_roots or any(module == p or module.startswith(p + ".") for p in forbidden_prefixes):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
            elif root in {"domain", "ports", "adapters", "application", "bootstrap"}:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports bare {module} (use culturebias.{module})")
    return bad


@pytest.mark.parametrize("layer", ["domain", "ports"])
def test_inner_layers_import_no_runtime_io_or_outer_layer(layer):
    assert violations(layer, RUNTIMES | IO_LIBRARIES | {"structlog", "dependency_injector"}, OUTER_LAYERS) == []


def test_ports_import_only_the_domain_and_themselves():
    assert violations("ports", set(), {"culturebias.application"}) == []


def test_application_talks_only_to_ports():
    assert violations("application", RUNTIMES | IO_LIBRARIES, {"culturebias.adapters", "culturebias.bootstrap"}) == []


def test_rule_checker_catches_a_forbidden_import(tmp_path, monkeypatch):
    (tmp_path / "domain").mkdir()
    (tmp_path / "domain" / "bad.py").write_text("import torch\nfrom culturebias.adapters.hf import backend\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    found = violations("domain", RUNTIMES, OUTER_LAYERS)
    assert len(found) == 2


def test_importing_culturebias_loads_no_heavy_runtime():
    code = (
        "import sys, importlib, pkgutil, culturebias\n"
        "import culturebias.domain, culturebias.ports, culturebias.application, culturebias.bootstrap.cli\n"
        "import culturebias.bootstrap.container, culturebias.application.run_benchmark\n"
        "for m in pkgutil.walk_packages(culturebias.domain.__path__, 'culturebias.domain.'):\n"
        "    importlib.import_module(m.name)\n"
        "import culturebias.bootstrap.libra_build_wiring, culturebias.application.libra_build.build\n"
        "import culturebias.adapters.libra_build_components, culturebias.adapters.libra_corpus.steps\n"
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
