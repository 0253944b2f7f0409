"""``culturebias compare`` and ``culturebias.compare``: what can be compared, where runs come from, what is written."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

import culturebias
from culturebias.testing.scripted import ScriptedGenerator
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.application.compare import build_comparison as build_with
from culturebias.bootstrap.registry import registry
from culturebias.bootstrap.cli import main
from culturebias.domain.kobbq.comparison import KoBBQComparison
from culturebias.domain.kobbq.summary import KoBBQSummary
from culturebias.domain.comparison.envelope import ComparisonMismatchError
from culturebias.domain.errors import ConfigError, DataError
from culturebias.domain.runs import RunManifest
from culturebias.testing.context import run_with_fakes
from culturebias.testing.kobbq_runs import kobbq_run


SMALL = {"limit": 400}  # the first 400 items: 48 templates


@functools.cache
def run(policy: str, in_memory: bool = False) -> KoBBQSummary:
    summary = kobbq_run(policy, name=policy, in_memory=in_memory, options=SMALL).summary
    assert isinstance(summary, KoBBQSummary)
    return summary


def written(tmp_path: Path, policy: str, folder: str | None = None) -> Path:
    out = tmp_path / (folder or policy)
    kobbq_run(policy, name=policy, out_dir=out, options=SMALL)
    return out


# -- what can be compared -------------------------------------------------------------------
def test_runs_of_another_benchmark_are_refused_naming_run_and_values():
    cbbq = run_with_fakes("cbbq", options={"mode": "generate", "categories": "gender"},
                          generator=ScriptedGenerator(lambda request, rendered: "C")).summary
    with pytest.raises(ComparisonMismatchError) as caught:
        build_comparison([run("biased"), cbbq])
    error = caught.value
    assert (error.run_id, error.field, error.value, error.expected) == (cbbq.run_id, "benchmark", "cbbq", "kobbq")
    assert run("biased").run_id in str(error)


def test_runs_of_another_schema_version_are_refused():
    older = run("unknown").model_copy(update={"schema_version": "1.0"})
    with pytest.raises(ComparisonMismatchError, match=r"schema_version '1.0' where run .* has '2"):
        build_comparison([run("biased"), older])


def test_runs_on_other_data_are_refused_unless_allowed_and_then_said():
    other = run("unknown", in_memory=True)
    assert other.data.fingerprint != run("biased").data.fingerprint
    with pytest.raises(ComparisonMismatchError) as caught:
        build_comparison([run("biased"), other])
    assert caught.value.field == "data fingerprint" and caught.value.value == other.data.fingerprint
    assert "--allow-data-mismatch" in str(caught.value)
    comparison = build_comparison([run("biased"), other], allow_data_mismatch=True)
    assert comparison.data_mismatch_allowed
    assert comparison.data_fingerprints == [run("biased").data.fingerprint, other.data.fingerprint]
    assert any("data differ" in note and other.run_id in note for note in comparison.notes)


def test_one_run_or_the_same_run_twice_is_not_a_comparison():
    with pytest.raises(ConfigError, match="at least two runs"):
        build_comparison([run("biased")])
    with pytest.raises(ConfigError, match="given twice"):
        build_comparison([run("biased"), run("biased")])


def build_comparison(summaries, allow_data_mismatch=False):
    return build_with(summaries, registry().benchmark(summaries[0].benchmark).comparer(), allow_data_mismatch)


def test_runs_of_another_benchmark_than_the_comparers_are_a_config_error():
    with pytest.raises(ConfigError, match="cannot be compared by the comparison of 'cbbq'"):
        build_with([run("biased"), run("biased").model_copy(update={"run_id": "b"})], registry().benchmark("cbbq").comparer())


def test_runs_of_one_model_are_labelled_with_a_short_run_id_and_other_models_by_name_alone():
    again = run("biased").model_copy(update={"run_id": "kobbq-again"})
    comparison = build_comparison([run("biased"), again, run("unknown")])
    short = run("biased").run_id.removeprefix("kobbq-")[:6]
    assert comparison.labels() == [f"biased (run {short})", "biased (run again)", "unknown"]
    assert comparison.runs[0].models == {"generator": "scripted:biased"}
    assert comparison.runs[0].run_id == run("biased").run_id  # the full id stays in the runs table


def test_a_short_run_id_grows_until_the_runs_sharing_a_model_differ():
    first = run("biased").model_copy(update={"run_id": "kobbq-1a2b3c4d5e6f"})
    second = run("biased").model_copy(update={"run_id": "kobbq-1a2b3c4d9999"})
    comparison = build_comparison([first, second])
    assert comparison.labels() == ["biased (run 1a2b3c4d5)", "biased (run 1a2b3c4d9)"]


# -- where runs come from, what is written ---------------------------------------------------
def test_api_compares_folders_and_summary_files_and_writes_typed_json_and_report(tmp_path):
    biased, unknown = written(tmp_path, "biased"), written(tmp_path, "unknown")
    comparison = culturebias.compare([biased, unknown / "summary.json"], out=tmp_path / "cmp")
    assert isinstance(comparison, KoBBQComparison)
    stored = KoBBQComparison.model_validate_json((tmp_path / "cmp" / "comparison.json").read_text(encoding="utf-8"))
    assert stored == comparison
    payload = json.loads((tmp_path / "cmp" / "comparison.json").read_text(encoding="utf-8"))
    assert payload["schema_version"] == "1.3" and payload["benchmark"] == "kobbq"
    # every comparison carries the descriptor's headline metrics and each run's values of them
    assert [m["name"] for m in payload["headline_metrics"]] == ["acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis"]
    assert set(payload["headlines"]) == set(comparison.labels())
    biased_label = comparison.labels()[0]
    assert payload["headlines"][biased_label]["diff_bias_amb"]["value"] == comparison.body.table3[biased_label].diff_bias_amb.mean
    assert [r["label"] for r in payload["runs"]] == ["biased", "unknown"]
    report = (tmp_path / "cmp" / "comparison.md").read_text(encoding="utf-8")
    assert (tmp_path / "cmp" / "comparison_kobbq.png").is_file()
    row = next(r for r in comparison.body.wilcoxon if r.metric == "diff_bias_amb")
    assert f"| diff_bias_amb | biased | unknown | {row.statistic:.3f} | {row.p_value:.2e} ***" in report
    assert "| biased | 0.000 ± 0.000 | 0.500 ± 0.000 | 1.000 ± 0.000 | 1.000 ± 0.000 | 0.000 ± 0.000 |" in report


def test_without_out_nothing_is_written(tmp_path):
    comparison = culturebias.compare([run("biased"), run("unknown")])
    assert comparison.benchmark == "kobbq" and list(tmp_path.iterdir()) == []


def test_a_data_mismatch_allowed_is_said_in_the_report(tmp_path):
    culturebias.compare([run("biased"), run("unknown", in_memory=True)], out=tmp_path, allow_data_mismatch=True)
    report = (tmp_path / "comparison.md").read_text(encoding="utf-8")
    assert "Runs on different data" in report and "--allow-data-mismatch" in report


def stored_runs(tmp_path: Path) -> tuple[Path, list[str]]:
    path = tmp_path / "store" / "results.sqlite"
    store = SQLiteResultStore(path)
    try:
        ids = [kobbq_run(p, name=p, store=store, options=SMALL).run_id for p in ("biased", "unknown")]
        store.create_run(RunManifest(run_id="kobbq-broken", benchmark="kobbq", config={}, config_fingerprint="c", data_fingerprint="d"))
        store.mark_failed("kobbq-broken", "RuntimeError: out of memory")
    finally:
        store.close()
    return path, ids


def test_run_ids_are_looked_up_in_a_store(tmp_path):
    path, ids = stored_runs(tmp_path)
    comparison = culturebias.compare(ids, store=path)
    assert [r.run_id for r in comparison.runs] == ids
    with pytest.raises(DataError, match="kobbq-broken is failed, not finished: RuntimeError: out of memory"):
        culturebias.compare([ids[0], "kobbq-broken"], store=path)
    with pytest.raises(DataError, match="no run 'kobbq-nothing'"):
        culturebias.compare([ids[0], "kobbq-nothing"], store=path)
    with pytest.raises(DataError, match="give the store"):
        culturebias.compare(ids)


def test_cli_compare_writes_files_and_refuses_with_one_line(tmp_path, capsys):
    path, ids = stored_runs(tmp_path)
    assert main(["compare", *ids, "--store", str(path), "--out", str(tmp_path / "cmp")]) == 0
    out = capsys.readouterr().out
    assert f"comparison: {tmp_path / 'cmp' / 'comparison.json'}" in out and "comparison.md" in out
    other = written(tmp_path, "unknown", "other")
    other_data = tmp_path / "other-data"
    kobbq_run("unknown", name="unknown", out_dir=other_data, in_memory=True, options=SMALL)
    assert main(["compare", str(other), str(other_data), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("culturebias: error: run kobbq-") and "data fingerprint" in err and "\n" not in err
    assert not (tmp_path / "x" / "comparison.json").exists()
    assert main(["compare", str(other), str(other_data), "--out", str(tmp_path / "x"), "--allow-data-mismatch"]) == 0


def test_compare_loads_no_model_runtime(tmp_path):
    biased, unknown = written(tmp_path, "biased"), written(tmp_path, "unknown")
    code = (
        "import sys\n"
        "from culturebias.bootstrap.cli import main\n"
        f"assert main(['compare', {str(biased)!r}, {str(unknown)!r}, '--out', {str(tmp_path / 'cmp')!r}]) == 0\n"
        "import culturebias\n"
        f"culturebias.compare([{str(biased)!r}, {str(unknown)!r}])\n"
        "print('heavy=' + ','.join(m for m in ('torch', 'transformers', 'onnxruntime', 'llama_cpp') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "heavy="
    assert (tmp_path / "cmp" / "comparison.json").is_file()


def test_runs_limited_differently_are_compared_with_a_note():
    full = run("unknown").model_copy(update={"limit": None, "run_id": "kobbq-full"})
    comparison = build_comparison([run("biased"), full])
    assert comparison.runs[0].limit == 400 and comparison.runs[1].limit is None
    assert any("different parts of the data" in note and "kobbq-full: all" in note for note in comparison.notes)


def test_two_runs_of_one_model_carry_the_same_short_labels_in_json_markdown_and_html(tmp_path):
    first, second = written(tmp_path, "biased", "first"), written(tmp_path, "biased", "second")
    comparison = culturebias.compare([first, second], out=tmp_path / "cmp")
    labels = comparison.labels()
    assert len(set(labels)) == 2 and all(label.startswith("biased (run ") for label in labels)
    markdown = (tmp_path / "cmp" / "comparison.md").read_text(encoding="utf-8")
    html = (tmp_path / "cmp" / "comparison.html").read_text(encoding="utf-8")
    for label, run_ref in zip(labels, comparison.runs):
        assert label in markdown and label in html
        assert f"biased ({run_ref.run_id})" not in markdown + html
