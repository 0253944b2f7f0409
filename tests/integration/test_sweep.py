"""``culturebias sweep`` / ``culturebias.sweep``: models × benchmarks into one store, a failing model recorded,
resumable as a whole, then one comparison per benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import culturebias
from culturebias.adapters.kobbq.files import KoBBQFiles
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.bootstrap.cli import main
from culturebias.domain.bbq.answer_order import shown_order
from culturebias.domain.errors import ConfigError

LIMIT = 6


def replay(path: Path, policy: str) -> Path:
    """KoBBQ answers of a model that always picks the biased (or the unknown) option, prompts 1 and 2, order 0."""
    with path.open("w", encoding="utf-8") as handle:
        for item in KoBBQFiles(None).load().items[:LIMIT]:
            chosen = item.unknown_index if policy == "unknown" or item.biased_index is None else item.biased_index
            letter = "ABC"[shown_order(3, 0).index(chosen)]
            for prompt in (1, 2):
                record = {"sample_id": item.sample_id, "prompt_id": prompt, "permutation": 0, "raw": letter}
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def sweep_file(tmp_path: Path, missing: Path) -> Path:
    biased, unknown = replay(tmp_path / "biased.jsonl", "biased"), replay(tmp_path / "unknown.jsonl", "unknown")
    text = f"""
benchmarks = ["kobbq"]

[[models]]
name = "stereotyper"
backend = "replay"
path = "{biased}"

[[models]]
name = "broken"
backend = "replay"
path = "{missing}"

[[models]]
name = "cautious"
backend = "replay"
path = "{unknown}"

[protocol.kobbq]
prompts = "1,2"
permutations = "0"
limit = {LIMIT}
statistics = false

[run]
progress = "false"
"""
    path = tmp_path / "sweep.toml"
    path.write_text(text, encoding="utf-8")
    return path


def stored(out: Path) -> list[tuple[str, str]]:
    store = SQLiteResultStore(out / "results.sqlite")
    try:
        return [(m.run_id, m.status) for m in store.find_runs()]
    finally:
        store.close()


def test_a_sweep_records_a_failing_model_finishes_the_others_compares_and_resumes(tmp_path, capsys):
    missing = tmp_path / "not-yet.jsonl"
    plan, out = sweep_file(tmp_path, missing), tmp_path / "sweep"

    assert main(["sweep", str(plan), "--out", str(out)]) == 1, "a failed pair makes the sweep fail at the end"
    printed = capsys.readouterr().out
    record = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    pairs = {p["model"]: p for p in record["pairs"]}
    assert {m: p["status"] for m, p in pairs.items()} == {"stereotyper": "finished", "broken": "failed", "cautious": "finished"}
    assert "not-yet.jsonl" in pairs["broken"]["error"] and "broken\tkobbq\tfailed" in printed
    for name in ("stereotyper", "cautious"):
        assert (out / name / "kobbq" / "summary.json").is_file()
    [comparison] = record["comparisons"]
    assert comparison["status"] == "written"
    assert comparison["runs"] == [pairs["stereotyper"]["run_id"], pairs["cautious"]["run_id"]]
    compared = json.loads((out / "comparison-kobbq" / "comparison.json").read_text(encoding="utf-8"))
    assert [r["run_id"] for r in compared["runs"]] == comparison["runs"]
    runs_before = stored(out)
    # A model that cannot be found fails before it writes anything (no run, no folder): sweep.json alone records it.
    assert sorted(status for _, status in runs_before) == ["finished", "finished"], "one store for the sweep"
    assert pairs["broken"]["run_id"] is None and not (out / "broken" / "kobbq").exists()

    # --resume: finished pairs are skipped, the failed one runs again (and fails again, recorded again).
    assert main(["sweep", str(plan), "--out", str(out), "--resume"]) == 1
    again = {p["model"]: p for p in json.loads((out / "sweep.json").read_text(encoding="utf-8"))["pairs"]}
    assert again["stereotyper"]["run_id"] == pairs["stereotyper"]["run_id"]
    assert again["cautious"]["run_id"] == pairs["cautious"]["run_id"]
    assert again["broken"]["status"] == "failed"
    assert [r for r in stored(out) if r[1] == "finished"] == [r for r in runs_before if r[1] == "finished"]

    # The model's answers arrive: --resume finishes the sweep and compares all three.
    replay(missing, "biased")
    capsys.readouterr()
    assert main(["sweep", str(plan), "--out", str(out), "--resume"]) == 0
    final = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert all(p["status"] == "finished" and p["error"] is None for p in final["pairs"])
    assert final["pairs"][1]["run_id"] not in (None, *(run_id for run_id, _ in runs_before)), "a run of its own"
    assert len(final["comparisons"][0]["runs"]) == 3
    assert sum(status == "finished" for _, status in stored(out)) == 3

    capsys.readouterr()
    assert main(["runs", "--store", str(out / "results.sqlite"), "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    finished = [r for r in listed if r["status"] == "finished"]
    assert {r["backend"] for r in finished} == {"replay"} and all("acc_amb" in r["headline"] for r in finished)


def test_the_api_takes_a_dict_and_a_bad_plan_is_refused_before_anything_runs(tmp_path):
    answers = replay(tmp_path / "biased.jsonl", "biased")
    plan = {
        "benchmarks": ["kobbq"],
        "models": [{"name": "only", "backend": "replay", "path": str(answers)}],
        "protocol": {"kobbq": {"prompts": "1,2", "permutations": "0", "limit": LIMIT, "statistics": False}},
    }
    result = culturebias.sweep(plan, out=tmp_path / "one")
    assert result.ok and result.pair("only", "kobbq").status == "finished"
    assert result.comparisons[0].status == "skipped", "one run: nothing to compare"

    for bad, message in (
        ({**plan, "protocol": {"kobbq": {"promts": "1"}}}, "promts"),
        ({**plan, "models": [{"backend": "replay", "path": str(answers)}]}, "models[1].name"),
        ({**plan, "benchmarks": ["kobbqq"]}, "kobbq"),
        ({**plan, "modles": []}, "modles"),
        ({**plan, "models": [{"name": "only", "backend": "replay", "path": str(answers), "batch_sise": 2}]}, "model 'only'"),
    ):
        with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
            culturebias.sweep(bad, out=tmp_path / "bad")
    assert not (tmp_path / "bad").exists()


def test_a_sweep_of_two_tiny_models_and_a_bad_model_path_finishes_both_models_on_both_benchmarks(tmp_path):
    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    plan = {
        "benchmarks": ["kobbq", "cbbq"],
        "models": [
            {"name": "llama", "path": str(cached_tiny_causal_lm(arch="llama"))},
            {"name": "nowhere", "path": str(tmp_path / "no-such-model")},
            {"name": "gpt2", "path": str(cached_tiny_causal_lm(arch="gpt2"))},
        ],
        "protocol": {"mode": "likelihood", "limit": 4, "kobbq": {"prompts": "1"}, "cbbq": {"categories": "gender"}},
        "run": {"cache_dir": str(tmp_path / "cache")},
    }
    result = culturebias.sweep(plan, out=tmp_path / "out")
    assert not result.ok
    statuses = {(p.model, p.benchmark): p.status for p in result.pairs}
    assert statuses == {
        ("llama", "kobbq"): "finished", ("llama", "cbbq"): "finished",
        ("nowhere", "kobbq"): "failed", ("nowhere", "cbbq"): "failed",
        ("gpt2", "kobbq"): "finished", ("gpt2", "cbbq"): "finished",
    }  # fmt: skip
    assert "no-such-model" in (result.pair("nowhere", "kobbq").error or "")
    assert [c.status for c in result.comparisons] == ["written", "written"]
    for benchmark in ("kobbq", "cbbq"):
        assert (tmp_path / "out" / f"comparison-{benchmark}" / "comparison.json").is_file()
    rows = culturebias.leaderboard(tmp_path / "out" / "results.sqlite")
    assert {(r.backend, r.status) for r in rows} == {("hf", "finished")}  # the bad path was refused before it wrote a run
    assert "is not a model folder" in (result.pair("nowhere", "cbbq").error or "")
    assert not (tmp_path / "out" / "nowhere" / "kobbq").exists()
