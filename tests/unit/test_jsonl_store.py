"""The JSON Lines store's on-disk layout: a batch is one line, so a kill cannot split it."""

import json

from culturebias.adapters.stores.jsonl_store import JsonlResultStore, _complete_lines_from_end
from culturebias.domain.runs import StageProgress


def test_a_batch_cut_part_way_by_a_kill_is_invisible_and_truncated_before_the_next_append(tmp_path):
    store = JsonlResultStore(tmp_path)
    store.save_results("r", "s", {"a": {"v": 1}}, progress=StageProgress(done=1, total=4))
    path = tmp_path / "results" / "r" / "s.jsonl"
    whole = json.dumps({"progress": {"done": 3, "total": 4}, "results": [{"key": "b", "payload": {}}, {"key": "c", "payload": {}}]})
    with open(path, "ab") as handle:  # what a write killed after 60% of its bytes leaves
        handle.write(whole.encode()[: int(len(whole) * 0.6)])
    assert store.load_results("r", "s") == {"a": {"v": 1}}
    assert JsonlResultStore(tmp_path)._progress("r")["s"].done == 1
    store.save_results("r", "s", {"d": {"v": 4}}, progress=StageProgress(done=2, total=4))
    assert store.load_results("r", "s") == {"a": {"v": 1}, "d": {"v": 4}}
    assert all(json.loads(line) for line in path.read_text().splitlines()), "the torn line was cut"


def test_stage_files_of_the_older_one_result_per_line_layout_still_load(tmp_path):
    path = tmp_path / "results" / "r" / "s.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text('{"key": "a", "payload": {"v": 1}}\n{"key": "b", "payload": {"v": 2}}\n{"progress": {"done": 2, "total": 9}}\n')
    store = JsonlResultStore(tmp_path)
    assert store.load_results("r", "s") == {"a": {"v": 1}, "b": {"v": 2}}
    assert store._progress("r")["s"].done == 2


def test_the_newest_progress_is_found_behind_a_line_longer_than_a_read_chunk(tmp_path):
    store = JsonlResultStore(tmp_path)
    store.save_results("r", "s", {"a": {}}, progress=StageProgress(done=1, total=3))
    store.save_results("r", "s", {f"k{i}": {"pad": "x" * 500} for i in range(400)}, progress=StageProgress(done=2, total=3))
    store.save_results("r", "s", {"late": {}})  # a batch saved without progress
    assert store._progress("r")["s"].done == 2


def test_lines_read_from_the_end_match_a_forward_split_for_every_chunk_size(tmp_path):
    path = tmp_path / "f"
    for content in [b"", b"a", b"a\n", b"a\nbb\nccc\n", b"a\nbb\nccc\ntorn", b"x" * 200 + b"\n" + b"y" * 300 + b"\nzz"]:
        path.write_bytes(content)
        expected = [line for line in content.split(b"\n")[:-1] if line][::-1]
        for chunk in (1, 2, 3, 7, 65536):
            assert list(_complete_lines_from_end(path, chunk)) == expected, (content, chunk)
