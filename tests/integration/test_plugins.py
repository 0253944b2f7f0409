"""Plugins from other distributions: a benchmark, a backend and a store added through entry points.

The test builds a real wheel of a tiny plugin distribution, installs it with pip
into a folder of its own, and runs culturebias in a fresh interpreter that sees
that folder: exactly what a governance team's ``pip install my-protocols`` does.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

PLUGIN = textwrap.dedent(
    '''
    """A tiny protocol: the share of prompts a model answers with "yes"."""
    from dataclasses import dataclass
    from pathlib import Path
    from typing import Literal

    from pydantic import BaseModel, ConfigDict

    from culturebias.domain.model_options import ModelOptions
    from culturebias.adapters.stores.memory_store import MemoryResultStore
    from culturebias.bootstrap.registry import BackendDescriptor, BenchmarkDescriptor, StoreDescriptor
    from culturebias.domain.identity import ModelIdentity
    from culturebias.domain.requests import GenerationParams, GenerationRequest, GenerationResult
    from culturebias.domain.summary import Block, ProtocolOutcome, RunSummary

    PROMPTS = ("Is the sky blue?", "Is water dry?", "Is fire hot?")


    class YesOptions(BaseModel):
        model_config = ConfigDict(extra="forbid")
        limit: int | None = None


    class YesMetrics(Block):
        yes_rate: float


    class YesCounts(Block):
        prompts: int


    class YesDetails(Block):
        replies: list[str]


    class YesSummary(RunSummary):
        benchmark: Literal["yesrate"]
        metrics: YesMetrics
        counts: YesCounts
        details: YesDetails


    class YesSource:
        def __init__(self, path):
            self.path = path

        def describe(self):
            return "three built-in prompts"

        def fingerprint(self):
            return "yes-v1"

        def load(self):
            return PROMPTS


    @dataclass(frozen=True)
    class YesPlan:
        pass


    class YesService:
        def __init__(self, options: YesOptions):
            self.options = options

        def preflight(self, ctx):
            ctx.generator()
            return YesPlan()

        def run(self, ctx, dataset, plan):
            prompts = list(dataset[: self.options.limit] if self.options.limit else dataset)
            params = GenerationParams(max_new_tokens=4)
            replies = [r.text for r in ctx.generator().generate([GenerationRequest(prompt=p, params=params) for p in prompts])]
            rate = sum(r.lower().startswith("yes") for r in replies) / len(replies)
            return ProtocolOutcome(
                metrics=YesMetrics(yes_rate=rate), counts=YesCounts(prompts=len(prompts)), details=YesDetails(replies=replies)
            )


    class YesReport:
        def write(self, summary, out_dir):
            path = Path(out_dir) / "report.md"
            path.write_text(f"# yes rate {summary.metrics.yes_rate:.3f}\\n", encoding="utf-8")
            return [path]


    class ParrotOptions(ModelOptions):
        answer: str = "yes"


    class ParrotGenerator:
        def __init__(self, options):
            self.options = options
            self.identity = ModelIdentity(backend="parrot", model="parrot", kind="scripted")

        def generate(self, requests, progress=None):
            return [GenerationResult(self.options.answer) for _ in requests]


    class ParrotBackend:
        def __init__(self, options):
            self.options = options

        def generator(self):
            return ParrotGenerator(self.options)

        def scorer(self):
            from culturebias.domain.errors import CapabilityError
            raise CapabilityError("parrot", "log-likelihoods")

        templater = pseudo_scorer = scorer


    def create_parrot(options, cache_dir):
        return ParrotBackend(options)


    class CountingStore(MemoryResultStore):
        """A memory store a host could swap for its own database."""


    benchmark = BenchmarkDescriptor(
        name="yesrate", title="Yes rate", culture="Nowhere", language="English",
        service=YesService, options=YesOptions, dataset_source=YesSource, summary=YesSummary,
        report=YesReport, data_licence="CC0", bundled_data=True,
    )
    backend = BackendDescriptor(
        name="parrot", description="answers every prompt with model.answer", factory=create_parrot,
        options=ParrotOptions, capabilities=frozenset({"generate"}),
    )
    store = StoreDescriptor(
        name="counting", description="memory, for the plugin test", factory=CountingStore, default_location="", durable=False,
    )
    '''
)

ENTRY_POINTS = textwrap.dedent(
    """
    [culturebias.benchmarks]
    yesrate = cb_yesrate_plugin:benchmark
    broken = cb_missing_module:benchmark

    [culturebias.backends]
    parrot = cb_yesrate_plugin:backend

    [culturebias.stores]
    counting = cb_yesrate_plugin:store
    """
)


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(folder: Path) -> Path:
    dist = "cb_yesrate_plugin-0.1.dist-info"
    files = {
        "cb_yesrate_plugin.py": PLUGIN.encode(),
        f"{dist}/METADATA": b"Metadata-Version: 2.1\nName: cb-yesrate-plugin\nVersion: 0.1\n",
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: culturebias-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist}/entry_points.txt": ENTRY_POINTS.encode(),
    }
    record = "\n".join([_record_line(n, d) for n, d in files.items()] + [f"{dist}/RECORD,,"]) + "\n"
    files[f"{dist}/RECORD"] = record.encode()
    wheel = folder / "cb_yesrate_plugin-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return wheel


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("plugin")
    wheel = build_wheel(folder)
    target = folder / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    assert (target / "cb_yesrate_plugin-0.1.dist-info" / "entry_points.txt").is_file()
    return target


def run_python(plugin_path: Path, code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_path), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=120)


def test_a_plugin_benchmark_backend_and_store_run_through_the_api(plugin_path, tmp_path):
    out = tmp_path / "run"
    done = run_python(
        plugin_path,
        f"""
        import json, culturebias
        summary = culturebias.evaluate("yesrate", model={{"backend": "parrot", "answer": "yes, surely"}},
                                       store={{"backend": "counting"}}, out={str(out)!r})
        print(json.dumps({{"type": type(summary).__name__, "rate": summary.metrics.yes_rate, "run": summary.run_id,
                          "benchmarks": [b.name for b in culturebias.benchmarks()],
                          "backends": [b.name for b in culturebias.backends()]}}))
        """,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["type"] == "YesSummary" and result["rate"] == 1.0 and result["run"].startswith("yesrate-")
    assert "yesrate" in result["benchmarks"] and "parrot" in result["backends"]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"] == {"yes_rate": 1.0} and summary["config"]["model"]["answer"] == "yes, surely"
    assert (out / "report.md").read_text(encoding="utf-8") == "# yes rate 1.000\n"


def test_the_cli_lists_plugins_and_names_a_broken_one(plugin_path):
    done = run_python(plugin_path, "import sys; from culturebias.bootstrap.cli import main; sys.exit(main(['list']))")
    assert done.returncode == 0, done.stderr
    assert "yesrate" in done.stdout and "parrot" in done.stdout and "counting" in done.stdout
    assert "(broken plugin)" in done.stdout and "cb_missing_module" in done.stdout


def test_a_broken_plugin_is_a_typed_error_and_writes_nothing(plugin_path, tmp_path):
    store = tmp_path / "results.sqlite"
    done = run_python(
        plugin_path,
        f"""
        import culturebias
        from culturebias.errors import PluginError
        try:
            culturebias.evaluate("broken", store={{"path": {str(store)!r}}}, out={str(tmp_path / 'out')!r})
        except PluginError as error:
            print("PluginError:", error)
        """,
    )
    assert done.returncode == 0, done.stderr
    assert "PluginError: plugin benchmark 'broken'" in done.stdout and "cb_missing_module" in done.stdout
    assert "culturebias.benchmarks" in done.stdout and "cb-yesrate-plugin" in done.stdout
    assert not store.exists() and not (tmp_path / "out").exists()


def test_a_plugin_backend_validates_its_own_options(plugin_path):
    done = run_python(
        plugin_path,
        """
        import culturebias
        from culturebias.errors import ConfigError
        try:
            culturebias.evaluate("yesrate", model={"backend": "parrot", "answr": "no"})
        except ConfigError as error:
            print("ConfigError:", error)
        """,
    )
    assert "ConfigError: unknown setting 'model.answr' for backend 'parrot'; did you mean 'model.answer'?" in done.stdout, done.stderr
