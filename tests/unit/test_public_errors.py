"""Every error class a host can meet is importable from ``culturebias.errors`` (docs/api.md)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import culturebias.errors

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_FOLDERS = ("domain", "ports", "application", "adapters", "bootstrap")
# Raised by a reply check and retried inside the openai client (with its kinds: no prompt log-probabilities,
# offsets that do not add up, tokens cut short); none leaves the client, which raises InvalidReplyError.
INTERNAL = {"InvalidReply"}


def error_classes() -> dict[str, str]:
    """Every class of the package that derives from CultureBiasError (or RunInterrupted), by name → its file."""
    bases: dict[str, tuple[set[str], str]] = {}
    for folder in PACKAGE_FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    names = {b.id if isinstance(b, ast.Name) else b.attr for b in node.bases if isinstance(b, (ast.Name, ast.Attribute))}
                    bases[node.name] = (names, str(path.relative_to(ROOT)))
    errors = {"CultureBiasError": "domain/errors.py", "RunInterrupted": "domain/runs.py"}
    internal = set(INTERNAL)
    grown = True
    while grown:
        grown = False
        for name, (parents, where) in bases.items():
            if name not in errors and name not in internal and parents & set(errors):
                errors[name] = where
                grown = True
            if name not in internal and parents & internal:
                internal.add(name)
                grown = True
    return {name: where for name, where in errors.items() if name not in internal}


def test_every_public_error_class_is_exported_from_culturebias_errors():
    found = error_classes()
    assert {"ServerUnavailableError", "InvalidReplyError", "TruthProbeError", "ComparisonMismatchError"} <= set(found)
    missing = {name: where for name, where in found.items() if name not in culturebias.errors.__all__}
    assert missing == {}
    for name in culturebias.errors.__all__:
        assert issubclass(getattr(culturebias.errors, name), (culturebias.errors.CultureBiasError, KeyboardInterrupt))


def test_importing_the_errors_loads_no_runtime_client_or_driver():
    code = "import sys, culturebias.errors\nprint(','.join(m for m in ('torch', 'transformers', 'httpx', 'psycopg', 'ray') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
