"""The contract every registered ResultStore passes (``registry().stores``: SQLite, JSONL, memory, plugins).

Stores whose descriptor says ``durable=False`` skip the tests of what survives
the process (reopening, a killed writer). The PostgreSQL store runs against a
real server started on 127.0.0.1 for the session, one fresh database per test.
A plugin runs it on its own store by importing this module's tests and overriding
``descriptor`` (a fixture giving its ``StoreDescriptor``) and, for a store that
needs more than ``StoreSettings(backend=name)``, ``store_settings``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from culturebias.bootstrap.registry import StoreDescriptor, registry
from culturebias.bootstrap.settings import StoreSettings
from culturebias.domain.runs import RunLease, RunManifest, StageProgress
from culturebias.ports.results import ResultStore
from culturebias.testing.postgres_server import postgres_server, postgres_store_settings  # noqa: F401  (fixtures)

STORES = registry().stores.names()


def open_store(descriptor: StoreDescriptor, folder: Path, settings: StoreSettings | None = None):
    """The store as the container opens it inside an output folder, with its ``store.*`` settings."""
    return descriptor.open(folder / descriptor.default_location if descriptor.default_location else None, settings)


@pytest.fixture
def store_settings(descriptor, request) -> StoreSettings:
    """A server store gets a fresh database on the session's server; a file store needs nothing more."""
    if descriptor.name == "postgres":
        return request.getfixturevalue("postgres_store_settings")
    return StoreSettings(backend=descriptor.name)


def require_durable(descriptor: StoreDescriptor) -> None:
    if not descriptor.durable:
        pytest.skip(f"store {descriptor.name!r} is not durable (durable=False): nothing survives its process")


@pytest.fixture(params=STORES)
def descriptor(request) -> StoreDescriptor:
    return registry().store(request.param)


@pytest.fixture
def make_store(descriptor, tmp_path, store_settings):
    return lambda: open_store(descriptor, tmp_path, store_settings)


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


def test_interrupted_and_resumed_runs_change_status(make_store):
    store = make_store()
    store.create_run(manifest())
    store.mark_interrupted("twbias-1", "interrupted by SIGTERM")
    run = store.get_run("twbias-1")
    assert (run.status, run.failure) == ("interrupted", "interrupted by SIGTERM")
    store.mark_running("twbias-1")
    run = store.get_run("twbias-1")
    assert (run.status, run.failure) == ("running", None)
    store.mark_failed("twbias-1", "boom")
    store.mark_running("twbias-1")
    store.finish_run("twbias-1", {"metrics": {}})
    assert [(m.status, m.failure) for m in store.find_runs()] == [("finished", None)]


def test_progress_is_saved_with_the_results(make_store):
    store = make_store()
    store.create_run(manifest("r1"))
    store.create_run(manifest("r2"))
    assert store.get_run("r1").progress == {}
    store.save_results("r1", "loglikelihood", {"k1": {"v": 1}, "k2": {"v": 2}}, progress=StageProgress(done=2, total=5))
    store.save_results("r1", "generation", {"g": {"text": "A"}}, progress=StageProgress(done=1, total=1))
    store.save_results("r1", "loglikelihood.plan", {"p": {"keys": ["k1"]}})  # no progress: stays out of it
    assert store.get_run("r1").progress == {
        "loglikelihood": StageProgress(done=2, total=5),
        "generation": StageProgress(done=1, total=1),
    }
    store.save_results("r1", "loglikelihood", {"k3": {"v": 3}}, progress=StageProgress(done=3, total=6))
    [r1, r2] = sorted(store.find_runs(), key=lambda m: m.run_id)
    assert r1.progress["loglikelihood"] == StageProgress(done=3, total=6) and r2.progress == {}
    assert r1.progress_text() == "generation 1/1, loglikelihood 3/6"


def test_the_resume_identity_is_kept_with_the_manifest(make_store):
    store = make_store()
    identity = {"model": {"batch_size": 4, "weights": {"model.safetensors": "12:ab"}}, "run": {"seed": 0, "chunk_size": 8}}
    store.create_run(manifest().model_copy(update={"identity": identity}))
    assert store.get_run("twbias-1").identity == identity
    assert store.find_runs()[0].identity == identity


def test_progress_survives_reopening(descriptor, make_store):
    require_durable(descriptor)
    store = make_store()
    store.create_run(manifest())
    store.save_results("twbias-1", "loglikelihood", {"k": {"v": 1}}, progress=StageProgress(done=1, total=9))
    store.mark_interrupted("twbias-1", "interrupted by SIGINT")
    store.close()
    reopened = make_store()
    run = reopened.get_run("twbias-1")
    assert run.status == "interrupted" and run.progress == {"loglikelihood": StageProgress(done=1, total=9)}


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
from culturebias.bootstrap.settings import StoreSettings
from culturebias.domain.runs import RunLease, RunManifest, StageProgress
descriptor, root = registry().store(sys.argv[1]), Path(sys.argv[2])
settings = StoreSettings.model_validate_json(sys.argv[3])
store = descriptor.open(root / descriptor.default_location if descriptor.default_location else None, settings)
store.create_run(RunManifest(run_id="twbias-1", benchmark="twbias", config={}, config_fingerprint="c", data_fingerprint="d"))
store.save_results("twbias-1", "s", {"first": {"v": 0}})
i = 0
while True:
    batch = {f"b{i}-{j}": {"v": j, "pad": "x" * 200} for j in range(500)}
    store.save_results("twbias-1", "s", batch, progress=StageProgress(done=1 + 500 * (i + 1), total=10**9))
    i += 1
    if i == 2:  # two whole batches are stored: the test may kill from now on, while later batches are written
        print("stored", flush=True)
        sys.stdout.close()
"""


def test_a_killed_writer_leaves_only_whole_batches(descriptor, make_store, tmp_path, store_settings):
    require_durable(descriptor)
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, descriptor.name, str(tmp_path), store_settings.model_dump_json()],
        stdout=subprocess.PIPE,
        text=True,
    )
    # The writer says when two whole batches are stored, however slowly it starts on a loaded machine.
    # The test never reads the store while it grows: on a loaded machine each read of a growing file
    # took longer than the writer needed to add more, and the file grew without bound.
    assert process.stdout.readline().strip() == "stored", "the writer died before it stored two batches"
    assert process.poll() is None, "the writer died before it was killed"
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
    assert store.get_run("twbias-1").progress["s"].done == len(results), "progress is stored with its batch"
    # and the store accepts new writes after the crash
    store.save_results("twbias-1", "s", {"after": {"v": 1}})
    assert store.load_results("twbias-1", "s")["after"] == {"v": 1}


# -- leases: which process writes a run ---------------------------------------------------------------

LONG_AGO = "2000-01-01T00:00:00.000000Z"


def lease(token: str, heartbeat: str = "2030-01-01T00:00:00.000000Z", pid: int = 4242) -> RunLease:
    return RunLease(token=token, host="host-a", pid=pid, acquired_at=heartbeat, heartbeat_at=heartbeat)


def test_a_live_lease_is_held_by_one_process_and_shown_with_the_run(make_store):
    store = make_store()
    store.create_run(manifest())
    assert store.get_run("twbias-1").lease is None
    first = lease("first")
    assert store.acquire_lease("twbias-1", first, stale_before=LONG_AGO) is None
    assert store.acquire_lease("twbias-1", first, stale_before=LONG_AGO) is None, "its own lease is taken again"
    assert store.acquire_lease("twbias-1", lease("second"), stale_before=LONG_AGO) == first, "a live lease is not given up"
    assert store.get_run("twbias-1").lease == first
    assert [m.lease for m in store.find_runs("twbias")] == [first]


def test_a_lease_is_renewed_released_and_taken_over_when_stale_or_dead(make_store):
    store = make_store()
    store.create_run(manifest())
    old = lease("old", heartbeat="2026-01-01T00:00:00.000000Z")
    assert store.acquire_lease("twbias-1", old, stale_before=LONG_AGO) is None
    assert store.renew_lease("twbias-1", "old", "2026-01-01T00:00:30.000000Z")
    assert store.get_run("twbias-1").lease.heartbeat_at == "2026-01-01T00:00:30.000000Z"
    # stale: its heartbeat is older than the caller's threshold
    assert store.acquire_lease("twbias-1", lease("new"), stale_before="2026-01-01T00:01:00.000000Z") is None
    assert not store.renew_lease("twbias-1", "old", "2026-01-01T00:02:00.000000Z"), "the old holder lost it"
    store.release_lease("twbias-1", "old")  # not its lease any more: nothing happens
    assert store.get_run("twbias-1").lease.token == "new"
    # found dead by the caller (its process is gone): taken although its heartbeat is fresh
    assert store.acquire_lease("twbias-1", lease("third"), stale_before=LONG_AGO, replacing="new") is None
    store.release_lease("twbias-1", "third")
    assert store.get_run("twbias-1").lease is None
    assert store.acquire_lease("twbias-1", lease("fourth"), stale_before=LONG_AGO) is None


def test_a_lease_survives_reopening(descriptor, make_store):
    require_durable(descriptor)
    store = make_store()
    store.create_run(manifest())
    store.acquire_lease("twbias-1", lease("kept"), stale_before=LONG_AGO)
    store.close()
    assert make_store().get_run("twbias-1").lease == lease("kept")


RACER = """
import sys, time
from pathlib import Path
from culturebias.bootstrap.registry import registry
from culturebias.bootstrap.settings import StoreSettings
from culturebias.domain.runs import RunLease
descriptor, root = registry().store(sys.argv[1]), Path(sys.argv[2])
settings, token, go = StoreSettings.model_validate_json(sys.argv[3]), sys.argv[4], Path(sys.argv[5])
store = descriptor.open(root / descriptor.default_location if descriptor.default_location else None, settings)
stamp = "2030-01-01T00:00:00.000000Z"
while not go.exists():
    time.sleep(0.01)
held = store.acquire_lease("twbias-1", RunLease(token=token, host="h", pid=1, acquired_at=stamp, heartbeat_at=stamp), "2000")
print("took" if held is None else "held by " + held.token, flush=True)
"""


def test_processes_racing_for_a_lease_leave_one_holder(descriptor, make_store, tmp_path, store_settings):
    require_durable(descriptor)
    store = make_store()
    store.create_run(manifest())
    go = tmp_path / "go"
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, descriptor.name, str(tmp_path), store_settings.model_dump_json(), f"racer-{n}", str(go)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for n in range(4)
    ]
    go.touch()
    said = []
    for racer in racers:
        out, errors = racer.communicate(timeout=120)
        assert racer.returncode == 0, errors
        said.append(out.strip())
    winner = store.get_run("twbias-1").lease.token
    assert said.count("took") == 1 and said[int(winner.split("-")[1])] == "took"
    assert all(line == f"held by {winner}" for line in said if line != "took")
