"""SQLite specifics the store contract cannot see."""

from __future__ import annotations

from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.domain.runs import RunManifest, StageProgress


def test_a_transaction_left_open_by_a_signal_does_not_block_the_next_write(tmp_path):
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    store.create_run(RunManifest(run_id="r", benchmark="b", config={}, config_fingerprint="c", data_fingerprint="d"))
    store._db.execute("BEGIN IMMEDIATE")  # as if SIGTERM struck between BEGIN and COMMIT
    store._db.execute("INSERT INTO results (run_id, stage, key, payload) VALUES ('r', 's', 'half', '{}')")
    store.save_results("r", "s", {"k": {"v": 1}}, progress=StageProgress(done=1, total=1))
    assert store.load_results("r", "s") == {"k": {"v": 1}}, "the torn batch is rolled back, the new one committed"
    assert store.get_run("r").progress == {"s": StageProgress(done=1, total=1)}


def test_progress_of_many_runs_is_listed(tmp_path):
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    for i in range(600):
        store.create_run(RunManifest(run_id=f"r{i}", benchmark="b", config={}, config_fingerprint="c", data_fingerprint="d"))
    store.save_results("r599", "s", {"k": {}}, progress=StageProgress(done=1, total=2))
    runs = {m.run_id: m for m in store.find_runs("b")}
    assert len(runs) == 600 and runs["r599"].progress == {"s": StageProgress(done=1, total=2)} and runs["r0"].progress == {}
