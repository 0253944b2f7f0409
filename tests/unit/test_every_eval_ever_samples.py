"""Every Eval Ever's per-item samples file (issue 37 point 4): one instance record per item beside the aggregate
document, validated against the vendored 0.3.0 schema, redacted as the run's store is; a file that breaks the
schema is one line, exit 3, and nothing is written."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

import culturebias
from culturebias.adapters.governance import every_eval_ever_samples
from culturebias.adapters.governance.every_eval_ever import schema, write_every_eval_ever
from culturebias.adapters.governance.every_eval_ever_samples import SAMPLES_SCHEMA_FILE, samples_schema
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.bootstrap.cli import main
from culturebias.bootstrap.governance import exported_run
from culturebias.domain.redaction import REDACTED
from culturebias.testing.context import run_with_fakes
from culturebias.testing.kobbq_runs import policy_generator
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer

SECRET = "api_key=sk-culturebias0123456789abcdef"


@pytest.fixture(autouse=True)
def _restore_logging():
    yield
    import structlog

    structlog.reset_defaults()


def _run(folder: Path, **kwargs) -> Path:
    folder.mkdir()
    store = SQLiteResultStore(folder / "results.sqlite")
    try:
        run_with_fakes("kobbq", out_dir=folder, store=store, report=False, **kwargs)
    finally:
        store.close()
    return folder


class Leaky:
    """A scripted model whose every reply carries a secret on its second line."""

    def __init__(self, inner: ScriptedGenerator):
        self._inner = inner
        self.identity = inner.identity

    def generate(self, requests, progress=None):
        return [replace(r, text=f"{r.text}\n{SECRET}") for r in self._inner.generate(requests, progress)]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """Generate mode; every reply carries a secret after the letter a random model picks."""
    leaky = Leaky(policy_generator("random", "leaky"))
    options = {"mode": "generate", "prompts": "1", "permutations": "0", "limit": 12, "statistics": False}
    return _run(tmp_path_factory.mktemp("eee") / "generated", options=options, generator=leaky)


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    """Likelihood mode: option B is always the likeliest; nothing is asked, nothing replied."""
    scorer = ScriptedScorer(lambda context, continuation: -1.0 if continuation.strip() == "B" else -3.0)
    options = {"mode": "likelihood", "prompts": "1", "permutations": "0", "limit": 4, "statistics": False}
    return _run(tmp_path_factory.mktemp("eee") / "scored", options=options, scorer=scorer)


def export(run: Path, out: Path, capsys) -> tuple[dict, list[dict], Path]:
    assert main(["export", str(run), "--format", "every-eval-ever", "--out", str(out)]) == 0
    written = [line.removeprefix("written: ") for line in capsys.readouterr().out.splitlines()]
    document = json.loads(out.read_text(encoding="utf-8"))
    samples = Path(written[1])
    assert written[0] == str(out) and samples.parent == out.parent and samples.name.endswith("_samples.jsonl")
    return document, [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()], samples


def test_the_samples_file_lies_beside_the_document_and_validates_against_the_vendored_schema(generated, tmp_path, capsys):
    document, lines, samples = export(generated, tmp_path / "eee.json", capsys)
    jsonschema.Draft7Validator(schema()).validate(document)
    validator = jsonschema.Draft7Validator(samples_schema())
    for line in lines:
        validator.validate(line)
    records = culturebias.samples(generated)
    assert [line["sample_id"] for line in lines] == [r.item_id for r in records] and len(lines) > 0
    detail = document["detailed_evaluation_results"]
    assert detail["checksum"] == hashlib.sha256(samples.read_bytes()).hexdigest() and detail["hash_algorithm"] == "sha256"
    assert detail["total_rows"] == len(lines) and detail["file_path"] == f"data/KoBBQ/local/leaky/{samples.name}"
    assert {line["evaluation_id"] for line in lines} == {document["evaluation_id"]}
    assert {line["model_id"] for line in lines} == {document["model_info"]["id"]} == {"leaky"}
    assert {line["schema_version"] for line in lines} == {document["schema_version"]} == {"0.3.0"}
    for line, record in zip(lines, records):
        options = json.loads(record.metadata["options"])
        assert line["input"]["raw"] == record.prompt and line["input"]["reference"] == [options[record.metadata["answer_index"]]]
        assert line["output"]["raw"] == [record.answer] and line["interaction_type"] == "single_turn"
        assert line["answer_attribution"] == [{"turn_idx": 0, "source": "output.raw", "extracted_value": record.parsed,
                                               "extraction_method": "culturebias kobbq parser", "is_terminal": True}]
        assert line["evaluation"] == {"score": 1.0 if record.correct else 0.0, "is_correct": record.correct is True}
        assert line["metadata"]["outcome"] == record.outcome and line["metadata"]["score_basis"] == "correct"
        assert line["metadata"]["meta.category"] == record.metadata["category"]
    assert {line["evaluation"]["is_correct"] for line in lines} == {True, False}  # the random model errs only sometimes


def test_the_samples_carry_the_runs_redaction(generated, tmp_path, capsys):
    _, lines, samples = export(generated, tmp_path / "eee.json", capsys)
    text = samples.read_text(encoding="utf-8")
    assert "sk-culturebias0123456789abcdef" not in text and all(REDACTED in line["output"]["raw"][0] for line in lines)


def test_a_scored_run_names_its_choices_and_the_log_likelihood_choice(scored, tmp_path, capsys):
    _, lines, _ = export(scored, tmp_path / "eee.json", capsys)
    first = lines[0]
    assert first["output"] == {"raw": []} and first["input"]["choices"] == [" A", " B", " C"]
    assert first["answer_attribution"][0]["source"] == "input.choices"
    assert first["answer_attribution"][0]["extraction_method"] == "highest log-likelihood"
    assert json.loads(first["metadata"]["loglikelihoods"]) == [-3.0, -1.0, -3.0]


def test_a_second_export_of_the_run_replaces_its_samples_file(generated, tmp_path, capsys):
    _, _, first = export(generated, tmp_path / "eee.json", capsys)
    _, _, second = export(generated, tmp_path / "eee.json", capsys)
    assert first == second and sorted(p.name for p in tmp_path.iterdir()) == sorted(["eee.json", first.name])


def test_a_run_without_item_records_has_no_samples_file(generated, tmp_path):
    exported = replace(exported_run(generated), items=None)
    assert write_every_eval_ever(exported, tmp_path / "eee.json") == [tmp_path / "eee.json"]
    assert "detailed_evaluation_results" not in json.loads((tmp_path / "eee.json").read_text(encoding="utf-8"))


def test_a_samples_file_that_breaks_the_schema_is_one_line_exit_3_and_nothing_written(generated, tmp_path, monkeypatch, capsys):
    build = every_eval_ever_samples.instance_record

    def broken(*args, **kwargs):
        line = build(*args, **kwargs)
        return {key: value for key, value in line.items() if key != "evaluation"}

    monkeypatch.setattr(every_eval_ever_samples, "instance_record", broken)
    out = tmp_path / "out"
    code = main(["export", str(generated), "--format", "every-eval-ever", "--out", str(out / "eee.json")])
    err = capsys.readouterr().err
    assert code == 3 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "samples file breaks the schema" in err and "'evaluation' is a required property" in err and "_samples.jsonl, row 1" in err
    assert not out.exists()


def test_the_vendored_samples_schema_carries_its_version_and_source():
    assert samples_schema()["version"] == "0.3.0" == schema()["version"]
    readme = (SAMPLES_SCHEMA_FILE.parent / "README.md").read_text(encoding="utf-8")
    assert "instance_level_eval.schema.json" in readme and "9bce4136e789ec006c62582f5f9d107d20f8b398" in readme
