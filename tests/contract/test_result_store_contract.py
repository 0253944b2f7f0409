"""The contract every registered ResultStore passes (``registry().stores``: SQLite, JSONL, memory, plugins).

Stores whose descriptor says ``durable=False`` skip the tests of what survives
the process (reopening, a killed writer).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from culturebias.bootstrap.registry import StoreDescriptor, registry
from culturebias.domain.runs import RunManifest
from culturebias.ports.results import ResultStore

STORES = registry().stores.names()


def open_store(descriptor: StoreDescriptor, folder: Path):
    """The store as the container opens it inside an output folder."""
    return descriptor.open(folder / descriptor.default_location if descriptor.default_location else None)


def require_durable(descriptor: StoreDescriptor) -> None:
    if not descriptor.durable:
        pytest.skip(f"store {descriptor.name!r} is not durable (durable=False): nothing survives its process")


@pytest.fixture(params=STORES)
def descriptor(request) -> StoreDescriptor:
    return registry().store(request.param)


@pytest.fixture
def make_store(descriptor, tmp_path):
    return lambda: open_store(descriptor, tmp_path)


def manifest(run_id: str = "twbias-1", benchmark: str = "twbias") -> RunManifest:
    return RunManifest(run_id=run_id, benchmark=benchmark, config={"a": 1}, config_fingerprint="c1", data_fingerprint="d1")


def test_is_a_result_store(make_store):
    assert isinstance(make_store(), ResultStore)


def test_run_lifecycle(make_store):
    store = make_store()
    store.create_run(manifest())
    assert store.get_run("twbias-1").status == "running"
    store.finish_run("twbias-1", {"metrics": {"x": 1.5}})
    run = store.get_run("twbias-1")
    assert run.status == "finished" and run.finished_at
    assert store.load_summary("twbias-1") == {"metrics": {"x": 1.5}}
    assert store.get_run("nope") is None


def test_failed_runs_are_marked(make_store):
    store = make_store()
    store.create_run(manifest())
    store.mark_failed("twbias-1", "boom")
    assert store.get_run("twbias-1").status == "failed"


def test_results_round_trip_per_run_and_stage(make_store):
    store = make_store()
    store.create_run(manifest("r1"))
    store.create_run(manifest("r2"))
    store.save_results("r1", "loglikelihood", {"k1": {"logprob": -1.25, "text": "女人"}, "k2": {"logprob": -2.0}})
    store.save_results("r1", "generation", {"k1": {"text": "A"}})
    store.save_results("r2", "loglikelihood", {"k1": {"logprob": -9.0}})
    assert store.load_results("r1", "loglikelihood") == {"k1": {"logprob": -1.25, "text": "女人"}, "k2": {"logprob": -2.0}}
    assert store.load_results("r1", "generation") == {"k1": {"text": "A"}}
    assert store.load_results("r2", "loglikelihood") == {"k1": {"logprob": -9.0}}
    assert store.load_results("r3", "loglikelihood") == {}


def test_find_runs_filters_by_benchmark(make_store):
    store = make_store()
    store.create_run(manifest("a", "twbias"))
    store.create_run(manifest("b", "kobbq"))
    assert [m.run_id for m in store.find_runs("twbias")] == ["a"]
    assert {m.run_id for m in store.find_runs()} == {"a", "b"}
    assert store.get_run("a").config == {"a": 1}


def test_find_runs_filters_by_benchmark_and_survives_reopening(descriptor, make_store):
    require_durable(descriptor)
    store = make_store()
    store.create_run(manifest("a", "twbias"))
    store.create_run(manifest("b", "kobbq"))
    store.close()
    reopened = make_store()
    assert [m.run_id for m in reopened.find_runs("twbias")] == ["a"]
    assert {m.run_id for m in reopened.find_runs()} == {"a", "b"}
    assert reopened.get_run("a").config == {"a": 1}


WRITER = """
import sys
from pathlib import Path
from culturebias.bootstrap.registry import registry
from culturebias.domain.runs import RunManifest
descriptor, root = registry().store(sys.argv[1]), Path(sys.argv[2])
store = descriptor.open(root / descriptor.default_location)
store.create_run(RunManifest(run_id="twbias-1", benchmark="twbias", config={}, config_fingerprint="c", data_fingerprint="d"))
store.save_results("twbias-1", "s", {"first": {"v": 0}})
i = 0
while True:
    store.save_results("twbias-1", "s", {f"b{i}-{j}": {"v": j, "pad": "x" * 200} for j in range(500)})
    i += 1
"""


def test_a_killed_writer_leaves_only_whole_batches(descriptor, make_store, tmp_path):
    require_durable(descriptor)
    process = subprocess.Popen([sys.executable, "-c", WRITER, descriptor.name, str(tmp_path)])
    deadline = time.monotonic() + 30
    store = None
    while time.monotonic() < deadline:
        time.sleep(0.3)
        try:
            store = make_store()
            if len(store.load_results("twbias-1", "s")) > 1000:
                break
        except Exception:
            continue
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    store = make_store()
    results = store.load_results("twbias-1", "s")
    assert "first" in results
    batches: dict[str, int] = {}
    for key in results:
        if key != "first":
            batches[key.split("-")[0]] = batches.get(key.split("-")[0], 0) + 1
    assert batches, "the writer never wrote a batch"
    assert set(batches.values()) == {500}, "a batch was half-written"
    # and the store accepts new writes after the crash
    store.save_results("twbias-1", "s", {"after": {"v": 1}})
    assert store.load_results("twbias-1", "s")["after"] == {"v": 1}
