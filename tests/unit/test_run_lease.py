"""Run leases: ``--resume`` continues the folder's own run and never a run another live process writes.

A shared store (one SQLite file here) holds several runs of the same job. The
process writing a run holds its lease; a lease is stale when its heartbeat is
older than ``run.lease_seconds`` or its process on this host is gone. Clocks and
process checks are injected: nothing here waits on time.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from culturebias.testing.scripted import ScriptedScorer
from culturebias.adapters.stores.memory_store import MemoryResultStore
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.application.run_benchmark import run_benchmark
from culturebias.application.run_lease import LeaseRule, RunLeaseKeeper, mark_left_run_interrupted
from culturebias.domain.errors import ConfigError
from culturebias.domain.runs import RunInUseError, RunLease, RunManifest, utc_stamp

sys.path.insert(0, str(Path(__file__).parent))
from test_run_orchestration import ROWS, Exploding, context_factory, make_request, rule  # noqa: E402

NOW = datetime(2026, 6, 1, 12, 0, 0, tzinfo=timezone.utc)


def at(seconds: float) -> str:
    return utc_stamp(NOW + timedelta(seconds=seconds))


def holder(pid: int, heartbeat: str, host: str = "this-host", token: str = "other") -> RunLease:
    return RunLease(token=token, host=host, pid=pid, acquired_at=heartbeat, heartbeat_at=heartbeat)


def a_gone_pid() -> int:
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    return finished.pid


# -- the stale-lease rule -----------------------------------------------------------------------------


def test_a_lease_is_live_while_its_heartbeat_is_fresh_and_its_process_is_not_known_gone():
    rule_ = LeaseRule(stale_seconds=60, host="this-host", clock=lambda: NOW, alive=lambda pid: pid == 7)
    assert rule_.is_live(holder(7, at(-59)))
    assert not rule_.is_live(holder(7, at(-61))), "a heartbeat older than run.lease_seconds is stale"
    assert not rule_.is_live(holder(8, at(-1))), "a process on this host that is gone holds nothing"
    assert rule_.is_live(holder(8, at(-1), host="another-host")), "another host's process cannot be checked: its heartbeat decides"
    assert not rule_.is_live(None)


def test_the_keeper_renews_its_heartbeat_and_notices_a_takeover():
    store = MemoryResultStore()
    store.create_run(RunManifest(run_id="r", benchmark="toy", config={}, config_fingerprint="c", data_fingerprint="d"))
    ticks = iter(range(10**6))
    keeper = RunLeaseKeeper(store, "r", LeaseRule(stale_seconds=0.2, clock=lambda: NOW + timedelta(seconds=next(ticks))))
    assert keeper.acquire() is None
    first = store.get_run("r").lease.heartbeat_at
    try:
        deadline = datetime.now() + timedelta(seconds=60)  # a bound, not a timing assumption
        while store.get_run("r").lease.heartbeat_at == first:
            assert datetime.now() < deadline, "the heartbeat was never renewed"
            time.sleep(0.01)
        usurper = holder(1, at(10**7), token="usurper")
        assert store.acquire_lease("r", usurper, stale_before=at(10**7), replacing=keeper.lease.token) is None
        while not keeper.lost:
            assert datetime.now() < deadline, "the takeover was never noticed"
            time.sleep(0.01)
        with pytest.raises(RunInUseError, match="lost the run"):
            keeper.check()
    finally:
        keeper.release()
    assert store.get_run("r").lease == usurper, "a lost lease is not released over its new holder"


# -- which run --resume continues ---------------------------------------------------------------------


def shared_request(tmp_path: Path, folder: str, resume: bool = False):
    request = make_request(tmp_path, ROWS, resume=resume)
    request.out_dir = tmp_path / folder
    return request


def run_in(tmp_path: Path, folder: str, scorer, resume: bool = False):
    request = shared_request(tmp_path, folder, resume)
    return run_benchmark(request, context_factory(scorer, [request.store]))


def live_run(tmp_path: Path, pid: int | None = None) -> str:
    """A run of the same job that another process is writing now (its heartbeat fresh)."""
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    request = shared_request(tmp_path, "elsewhere")
    run_id = "toy-live"
    store.create_run(
        RunManifest(
            run_id=run_id, benchmark="toy", config=request.config, config_fingerprint=request.config_fingerprint,
            data_fingerprint=request.source.fingerprint(),
        )
    )
    store.acquire_lease(run_id, holder(pid or os.getpid(), utc_stamp(), host=platform.node()), stale_before=utc_stamp())
    store.close()
    return run_id


def test_resume_continues_the_folders_own_run_not_a_newer_live_one(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        run_in(tmp_path, "a", Exploding(ScriptedScorer(rule), batches=1))
    [own] = SQLiteResultStore(tmp_path / "results.sqlite").find_runs("toy")
    live = live_run(tmp_path)  # newer than the folder's own run, same job
    fresh = ScriptedScorer(rule)
    result = run_in(tmp_path, "a", fresh, resume=True)
    assert result.run_id == own.run_id and fresh.calls == [3], "only the folder's own missing scores are asked"
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    assert store.get_run(live).status == "running" and store.load_results(live, "loglikelihood") == {}
    assert store.get_run(own.run_id).lease is None, "the lease is released when the run ends"


def test_resume_elsewhere_never_attaches_to_a_live_run_and_starts_afresh(tmp_path):
    live = live_run(tmp_path)
    result = run_in(tmp_path, "b", ScriptedScorer(rule), resume=True)
    assert result.run_id != live
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    assert store.load_results(live, "loglikelihood") == {} and store.get_run(live).status == "running"


def test_resume_elsewhere_takes_over_a_run_whose_process_is_gone(tmp_path):
    left = live_run(tmp_path, pid=a_gone_pid())
    result = run_in(tmp_path, "b", ScriptedScorer(rule), resume=True)
    assert result.run_id == left


def test_the_folders_own_run_held_by_a_live_process_is_refused_naming_it(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        run_in(tmp_path, "a", Exploding(ScriptedScorer(rule), batches=1))
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    [own] = store.find_runs("toy")
    store.acquire_lease(own.run_id, holder(os.getpid(), utc_stamp(), host=platform.node()), stale_before=utc_stamp())
    with pytest.raises(RunInUseError) as refused:
        run_in(tmp_path, "a", ScriptedScorer(rule), resume=True)
    assert own.run_id in str(refused.value) and f"process {os.getpid()} on {platform.node()}" in str(refused.value)


# -- marking a run left running -----------------------------------------------------------------------


def test_a_run_left_running_by_a_gone_process_is_marked_interrupted_and_resumes(tmp_path):
    left = live_run(tmp_path, pid=a_gone_pid())
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    marked = mark_left_run_interrupted(store, left)
    assert marked.status == "interrupted" and "left running by process" in marked.failure and marked.lease is None
    assert run_in(tmp_path, "b", ScriptedScorer(rule), resume=True).run_id == left


def test_a_live_or_finished_run_is_not_marked(tmp_path):
    live = live_run(tmp_path)
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    with pytest.raises(RunInUseError, match="not left behind"):
        mark_left_run_interrupted(store, live)
    assert store.get_run(live).status == "running"
    finished = run_in(tmp_path, "b", ScriptedScorer(rule)).run_id
    with pytest.raises(ConfigError, match="is finished"):
        mark_left_run_interrupted(store, finished)
    with pytest.raises(ConfigError, match="no run nope"):
        mark_left_run_interrupted(store, "nope")
