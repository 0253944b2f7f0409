"""The fast tier (`pytest -q -m "not slow"`) follows its rule, and the full suite deselects nothing (issue 34 point 4).

The rule lives in tests/conftest.py (``slow_reason``): a test under tests/integration, one using a
fixture that loads a real model or starts a server (or ``costly``: 3 s of CPU or more), a contract
test on a real backend, and one that starts a subprocess are slow. Checked by collecting a few modules in-process, as
``pytest --collect-only`` would, with and without ``-m "not slow"``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODULES = [
    "tests/integration/test_numbers_unchanged.py",  # integration: slow whatever it does
    "tests/unit/test_hf_embedded.py",  # one test uses smollm2_installed
    "tests/contract/test_scorer_contract.py",  # hf, onnx and openai (a server) are real; scripted is a double
    "tests/contract/test_result_store_contract.py",  # the postgres store starts a server
    "tests/unit/test_cli.py",  # one test runs the console script in a subprocess
    "tests/unit/test_run_lease.py",  # a helper of the module starts a subprocess
    "tests/unit/test_model_tolerance.py",  # pure: all fast
    "tests/unit/test_limited_runs.py",  # one full LIBRA run takes the fixture costly
]


class Collected:
    """A plugin that keeps the node ids pytest selected and those it deselected."""

    def __init__(self) -> None:
        self.selected: list[str] = []
        self.deselected: list[str] = []

    def pytest_deselected(self, items):
        self.deselected += [item.nodeid for item in items]

    def pytest_collection_finish(self, session):
        self.selected = [item.nodeid for item in session.items]


def collect(*options: str) -> Collected:
    collected = Collected()
    args = ["--collect-only", "-q", "-p", "no:cacheprovider", "--rootdir", str(REPO), *options, *(str(REPO / m) for m in MODULES)]
    code = pytest.main(args, plugins=[collected])
    assert code == pytest.ExitCode.OK, f"collection failed ({code})"
    return collected


@pytest.fixture(scope="module")
def full() -> Collected:
    return collect()


@pytest.fixture(scope="module")
def fast() -> Collected:
    return collect("-m", "not slow")


def test_the_full_suite_deselects_nothing(full):
    assert full.deselected == []
    assert any(n.startswith("tests/integration/") for n in full.selected)
    assert any("[postgres]" in n for n in full.selected) and any("[hf]" in n for n in full.selected)


def test_the_fast_tier_runs_no_integration_test_no_real_model_no_server_and_no_subprocess(full, fast):
    assert sorted(fast.selected + fast.deselected) == sorted(full.selected)
    selected = "\n".join(fast.selected)
    assert "tests/integration/" not in selected
    assert "test_smollm2_gguf_is_found_without_importing_the_package" not in selected  # smollm2_installed
    for backend in ("[hf]", "[onnx]", "[openai]", "[postgres]"):
        assert backend not in selected
    assert "test_the_installed_script_exits_with_mains_code" not in selected  # subprocess.run in the test
    assert not [n for n in fast.selected if "test_run_lease" in n and "process_is_gone" in n]  # subprocess in a helper
    assert "test_libra_limit_takes_the_first_triplets" not in selected  # the costly fixture
    assert any("test_run_lease" in n and "process_is_gone" in n for n in full.selected)


def test_the_fast_tier_keeps_the_tests_on_doubles(full, fast):
    assert any("test_scorer_contract.py" in n and "[scripted]" in n for n in fast.selected)
    assert any("test_result_store_contract.py" in n and "[sqlite]" in n for n in fast.selected)
    assert any("test_cli.py" in n for n in fast.selected)
    assert any("test_limited_runs.py" in n for n in fast.selected)
    tolerance = [n for n in full.selected if "test_model_tolerance.py" in n]
    assert tolerance and set(tolerance) <= set(fast.selected)
