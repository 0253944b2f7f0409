"""The governance tools' formats, each read back with the real library: MLflow, Hugging Face model cards, Every Eval Ever."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import jsonschema
import pytest

import culturebias
from culturebias.adapters.governance.every_eval_ever import SCHEMA_FILE, _validate, schema
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.application.audit import stored_items
from culturebias.bootstrap.cli import main
from culturebias.bootstrap.governance import exported_run
from culturebias.domain.errors import DataError
from culturebias.domain.policy.model import Criterion, Policy
from culturebias.testing.kobbq_runs import kobbq_run

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = {"limit": 120}  # 15 templates: a quick run; allow_limited where a policy decides on it


def write_run(folder: Path, policy: str) -> Path:
    store = SQLiteResultStore(folder / "results.sqlite")
    # The random model's bias scores are exported as numbers only with the validity rules off (PROTOCOLS §6);
    # tests/unit/test_validity.py exports a run whose rules failed.
    options = {**OPTIONS, "validity": "off"} if policy == "random" else OPTIONS
    try:
        kobbq_run(policy, name=policy, out_dir=folder, store=store, options=options)
    finally:
        store.close()
    return folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("governance")
    return {policy: write_run(root / policy, policy) for policy in ("unknown", "random", "biased")}


def headline_interval(summary, name: str):
    return summary.metrics.overall.intervals[name]


# -- MLflow --------------------------------------------------------------------------------------
def test_export_logs_the_run_into_a_tracking_store_read_back_with_mlflowclient(runs, tmp_path, monkeypatch, capsys, costly):
    mlflow = pytest.importorskip("mlflow", reason="the governance extra (mlflow) is not installed")
    monkeypatch.chdir(tmp_path)  # a SQLite store keeps its artifacts in ./mlruns
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert main(["export", str(runs["random"]), "--format", "mlflow", "--tracking-uri", uri]) == 0
    mlflow_run_id = capsys.readouterr().out.strip().rpartition("mlflow run: ")[2]
    client = mlflow.MlflowClient(tracking_uri=uri)
    stored = client.get_run(mlflow_run_id)
    summary = culturebias.load_summary(runs["random"])
    interval = headline_interval(summary, "diff_bias_amb")
    metrics = stored.data.metrics
    assert metrics["diff_bias_amb"] == summary.metrics.overall.diff_bias_amb.mean
    assert (metrics["diff_bias_amb_ci_low"], metrics["diff_bias_amb_ci_high"]) == (interval.low, interval.high)
    assert stored.data.params["protocol.mode"] == "generate" and stored.data.params["protocol.limit"] == "120"
    tags = stored.data.tags
    assert tags["culturebias.data_fingerprint"] == summary.data.fingerprint
    assert tags["culturebias.model.generator"] == "scripted:random" and tags["culturebias.run_id"] == summary.run_id
    assert stored.info.run_name == summary.run_id and stored.info.status == "FINISHED"
    listed = {a.path for a in client.list_artifacts(mlflow_run_id, "culturebias")}
    assert {"culturebias/summary.json", "culturebias/report.md", "culturebias/items.json"} <= listed
    local = client.download_artifacts(mlflow_run_id, "culturebias/summary.json", str(tmp_path))
    assert json.loads(Path(local).read_text(encoding="utf-8"))["run_id"] == summary.run_id
    table = json.loads(Path(client.download_artifacts(mlflow_run_id, "culturebias/items.json", str(tmp_path))).read_text())
    assert len(table["data"]) == len(stored_run_items(runs["random"]))


def stored_run_items(folder: Path) -> list:
    store = SQLiteResultStore(folder / "results.sqlite")
    try:
        return stored_items(store, store.find_runs()[0].run_id)
    finally:
        store.close()


def test_policy_thresholds_are_checked_by_mlflow_validate_evaluation_results(runs):
    pytest.importorskip("mlflow", reason="the governance extra (mlflow) is not installed")
    from mlflow import validate_evaluation_results
    from mlflow.models.evaluation import EvaluationResult
    from mlflow.models.evaluation.validation import ModelValidationFailedException

    from culturebias.adapters.governance.mlflow_tracking import headline_metrics, policy_thresholds

    # 15 templates of all-"unknown" answers: score intervals (Newcombe's about ±0.20, Wilson's from 0.80; issue 33.2),
    # so the gate is one 15 templates can decide
    policy = Policy(name="gate", criteria=[
        Criterion(name="a", benchmark="kobbq", metric="diff_bias_amb", at_most=0.25),
        Criterion(name="b", benchmark="kobbq", metric="acc_amb", between=(0.75, 1.0)),
        Criterion(name="c", benchmark="kobbq", metric="acc_dis", at_least=0.0, confidence="point"),
        Criterion(name="d", benchmark="kobbq", metric="acc_dis", not_worse_than_baseline_by=0.1),  # no MLflow equivalent
    ])
    thresholds = policy_thresholds(policy)
    assert sorted(thresholds) == ["acc_amb_ci_high", "acc_amb_ci_low", "acc_dis", "diff_bias_amb_ci_high"]
    assert thresholds["diff_bias_amb_ci_high"].threshold == 0.25 and not thresholds["diff_bias_amb_ci_high"].greater_is_better

    def result(policy_name: str) -> EvaluationResult:
        return EvaluationResult(metrics=headline_metrics(exported_run(runs[policy_name])), artifacts={}, run_id="r")

    validate_evaluation_results(thresholds, result("unknown"))  # passes: raises nothing
    with pytest.raises(ModelValidationFailedException, match="diff_bias_amb_ci_high"):
        validate_evaluation_results(thresholds, result("biased"))
    # the same policy, decided by culturebias on the same run, agrees
    assert culturebias.check(Policy(name="gate", criteria=[c.model_copy(update={"allow_limited": True})
                                                           for c in policy.criteria[:3]]), runs["unknown"]).outcome == "pass"


EVALUATE = """
import json, sys
import mlflow, pandas
from mlflow import MlflowClient
from culturebias.adapters.governance.mlflow_tracking import policy_thresholds
from culturebias.domain.policy.model import Criterion, Policy

uri, answers = sys.argv[1], sys.argv[2]
mlflow.set_tracking_uri(uri)
config = {"benchmark": "kobbq", "model": {"backend": "replay", "path": answers},
          "options": {"prompts": "1,2", "permutations": "0", "mode": "generate", "statistics": False, "limit": 120}}
with mlflow.start_run() as run:
    result = mlflow.evaluate(data=pandas.DataFrame({"benchmark": ["kobbq"]}), model_type="text",
                             evaluators="culturebias", evaluator_config=config)
policy = Policy(name="gate", criteria=[Criterion(name="a", benchmark="kobbq", metric="diff_bias_amb", at_most=0.25)])
mlflow.validate_evaluation_results(policy_thresholds(policy), result)
stored = MlflowClient(tracking_uri=uri).get_run(run.info.run_id)
print(json.dumps({"result": result.metrics, "stored": stored.data.metrics, "artifacts": sorted(result.artifacts),
                  "summary_run": result.artifacts["summary.json"].content["run_id"],
                  "tag": stored.data.tags.get("culturebias.benchmark")}))
"""


def test_mlflow_evaluate_finds_the_evaluator_through_the_declared_entry_point(runs, tmp_path):
    pytest.importorskip("mlflow", reason="the governance extra (mlflow) is not installed")
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]
    value = declared["mlflow.model_evaluator"]["culturebias"]
    assert value == "culturebias.adapters.governance.mlflow_evaluator:CultureBiasEvaluator"
    # a distribution's metadata holding just that entry point, as pip would install it with culturebias
    dist = tmp_path / "site" / "culturebias_entry_point-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: culturebias-entry-point\nVersion: 0\n")
    (dist / "entry_points.txt").write_text(f"[mlflow.model_evaluator]\nculturebias = {value}\n")
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(
        json.dumps({"sample_id": r.metadata["sample_id"], "prompt_id": int(r.metadata["prompt_id"]),
                    "permutation": r.metadata["permutation"], "raw": r.answer}) + "\n"
        for r in stored_run_items(runs["unknown"])), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path / "site"), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(EVALUATE), f"sqlite:///{tmp_path / 'mlflow.db'}", str(answers)],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    summary = culturebias.load_summary(runs["unknown"])
    assert found["result"]["diff_bias_amb"] == summary.metrics.overall.diff_bias_amb.mean == 0.0
    assert found["result"]["acc_amb_ci_low"] == headline_interval(summary, "acc_amb").low
    assert found["stored"] == found["result"] and found["tag"] == "kobbq"
    assert found["artifacts"] == ["items", "report.html", "report.md", "summary.json"]
    assert found["summary_run"].startswith("kobbq-")


# -- Hugging Face model card ---------------------------------------------------------------------
def test_the_model_card_is_parsed_back_by_huggingface_hub(runs, tmp_path):
    pytest.importorskip("huggingface_hub", reason="the governance extra (huggingface_hub) is not installed")
    from huggingface_hub import ModelCard, metadata_load

    policy = tmp_path / "gate.toml"
    policy.write_text('[[criterion]]\nname = "ambiguous diff-bias"\nbenchmark = "kobbq"\nmetric = "diff_bias_amb"\n'
                      "at_most = 0.05\nallow_limited = true\n", encoding="utf-8")
    assert main(["check", str(policy), "--run", str(runs["random"]), "--json", str(tmp_path / "verdict.json")]) in (0, 2)
    card_file = tmp_path / "README.md"
    assert main(["export", str(runs["random"]), "--format", "model-card", "--out", str(card_file),
                 "--verdict", str(tmp_path / "verdict.json")]) == 0
    summary = culturebias.load_summary(runs["random"])
    card = ModelCard.load(card_file)
    results = {r.metric_type: r for r in card.data.eval_results}
    assert set(results) == {"acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis"}
    diff = results["diff_bias_amb"]
    interval = headline_interval(summary, "diff_bias_amb")
    assert diff.metric_value == summary.metrics.overall.diff_bias_amb.mean and diff.metric_name == "diff-bias in ambiguous contexts"
    assert (diff.dataset_name, diff.dataset_type, diff.dataset_config) == ("KoBBQ", "culturebias/kobbq", "kobbq")
    assert diff.dataset_revision == summary.data.fingerprint
    assert (diff.metric_args["ci_low"], diff.metric_args["ci_high"], diff.metric_args["n"]) == (interval.low, interval.high, 15)
    index = metadata_load(card_file)["model-index"][0]
    assert index["name"] == "random" and index["results"][0]["dataset"]["revision"] == summary.data.fingerprint
    assert "## Bias, Risks, and Limitations" in card.text
    assert f"| diff-bias in ambiguous contexts | {diff.metric_value:.4g} | {interval.low:.4g} to {interval.high:.4g} | 15 templates |" in card.text
    assert "Acceptance policy **" in card.text and "ambiguous diff-bias: diff-bias in ambiguous contexts is" in card.text
    assert "A limited run (`--limit 120`)" in card.text
    # the interval and n in model-index (args: the format has no uncertainty field) and the caveats beside each result
    assert (diff.metric_args["ci_level"], diff.metric_args["unit"]) == (0.95, "template")
    assert diff.metric_args["caveat_kinds"] == "limited,few_units,validity"
    row = next(line for line in card.text.splitlines() if line.startswith("| diff-bias in ambiguous contexts |"))
    assert row.endswith("| closer to 0 is better | --limit 120; intervals on 15 templates; validity rules off |")


def test_a_verdict_of_another_run_is_refused(runs, tmp_path):
    pytest.importorskip("huggingface_hub", reason="the governance extra (huggingface_hub) is not installed")
    verdict = culturebias.check(Policy(name="g", criteria=[Criterion(name="a", benchmark="kobbq", metric="acc_amb", at_least=0.5)]),
                                runs["unknown"], json=tmp_path / "v.json")
    assert verdict.outcome == "inconclusive"  # a limited run
    assert main(["export", str(runs["random"]), "--format", "model-card", "--out", str(tmp_path / "c.md"),
                 "--verdict", str(tmp_path / "v.json")]) == 2
    assert not (tmp_path / "c.md").exists()


# -- Every Eval Ever -----------------------------------------------------------------------------
def test_every_eval_ever_documents_validate_against_the_vendored_schema(runs, tmp_path):
    out = tmp_path / "eee.json"
    assert main(["export", str(runs["random"]), "--format", "every-eval-ever", "--out", str(out)]) == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(schema()).validate(document)
    summary = culturebias.load_summary(runs["random"])
    result = next(r for r in document["evaluation_results"] if r["evaluation_result_id"] == "kobbq.diff_bias_amb")
    interval = headline_interval(summary, "diff_bias_amb")
    uncertainty = result["score_details"]["uncertainty"]
    assert result["score_details"]["score"] == summary.metrics.overall.diff_bias_amb.mean
    assert uncertainty["confidence_interval"] == {"lower": interval.low, "upper": interval.high, "confidence_level": 0.95,
                                                  "method": f"bootstrap ({interval.method}) over templates"}
    assert (uncertainty["num_samples"], uncertainty["num_bootstrap_samples"]) == (15, 2000)
    assert result["metric_config"]["additional_details"]["direction"] == "closer to 0 is better"
    assert result["source_data"]["additional_details"]["data_fingerprint"] == summary.data.fingerprint
    details = document["eval_library"]["additional_details"]
    assert document["eval_library"] == {"name": "culturebias", "version": summary.culturebias_version, "additional_details": {
        "run_id": summary.run_id, "config_fingerprint": summary.config_fingerprint, "limit": "120",
        "items": "first 120 (--limit)", "caveats": details["caveats"], "caveat_kinds": "limited,few_units,validity"}}
    assert details["caveats"].startswith("A limited run (--limit 120)")


def test_the_vendored_schema_carries_its_version_and_licence_and_refuses_a_broken_document():
    assert schema()["version"] == "0.3.0"
    assert (SCHEMA_FILE.parent / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert "9bce4136e789ec006c62582f5f9d107d20f8b398" in (SCHEMA_FILE.parent / "README.md").read_text(encoding="utf-8")
    with pytest.raises(DataError, match="breaks the schema at the top: 'evaluation_id' is a required property"):
        _validate({"schema_version": "0.3.0"})


def test_export_names_every_format_and_asks_for_the_file(runs, tmp_path, capsys):
    assert main(["export", str(runs["random"]), "--format", "mlfow", "--out", str(tmp_path / "x")]) == 2
    assert "choose one of: csv, parquet, jsonl, mlflow, model-card, every-eval-ever" in capsys.readouterr().err
    assert main(["export", str(runs["random"]), "--format", "every-eval-ever"]) == 2
    assert "--format every-eval-ever writes a file: give --out FILE" in capsys.readouterr().err


def test_the_model_cards_n_column_says_one_template_in_the_singular(tmp_path):
    pytest.importorskip("huggingface_hub", reason="the governance extra (huggingface_hub) is not installed")
    from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
    from culturebias.testing.kobbq_runs import kobbq_run

    store = SQLiteResultStore(tmp_path / "run" / "results.sqlite")
    try:
        kobbq_run("random", name="random", out_dir=tmp_path / "run", store=store, options={"limit": 6})
    finally:
        store.close()
    card = tmp_path / "README.md"
    assert main(["export", str(tmp_path / "run"), "--format", "model-card", "--out", str(card)]) == 0
    rows = [line for line in card.read_text(encoding="utf-8").splitlines() if line.startswith("| accuracy in ambiguous")]
    assert rows and all("| 1 template |" in row for row in rows), rows
