"""A run's items as Every Eval Ever's per-item samples file (``instance_level_eval.schema.json``, schema 0.3.0).

One JSON line per item record of the run, beside the aggregate document and linked to it by
``evaluation_id``; the aggregate names the file in ``detailed_evaluation_results`` (its canonical
datastore path ``data/<benchmark>/<developer>/<model>/<uuid>_samples.jsonl``, the sha256 of its
bytes and its rows). Per item (docs/exports.md):

- ``input.raw``: the prompt as the model saw it (rendered: culturebias keeps no other form), or the
  scored texts one per line where a scoring protocol sent none; ``input.choices``: the scored texts (a likelihood protocol's options); ``input.reference``:
  the right option where the item has one (``meta.options[meta.answer_index]``), else empty;
- ``output.raw``: the model's reply (empty where it was scored, not asked: the likeliest option is then
  ``metadata.answer``);
- ``answer_attribution``: the parsed answer, read from the reply or chosen by log-likelihood;
- ``evaluation``: ``score`` = the item's ``score`` number where the benchmark gives one, else 1 for a
  correct answer and 0 otherwise (``metadata.score_basis`` says which); ``is_correct``;
- ``metadata`` (strings): outcome, the run id, every ``meta.<field>``, ``score.<name>`` and the
  log-likelihoods as JSON text.

Texts are redacted as the run's store redacts them (``application.audit.item_payload``).
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from functools import cache
from pathlib import Path
from typing import Any

from culturebias.adapters.governance.exported_run import ExportedRun
from culturebias.application.audit import item_payload
from culturebias.domain.errors import DataError

SAMPLES_SCHEMA_FILE = Path(__file__).resolve().parent / "every_eval_ever" / "instance_level_eval.schema.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_HF_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@cache
def samples_schema() -> dict[str, Any]:  # Any: JSON documents and their values
    return json.loads(SAMPLES_SCHEMA_FILE.read_text(encoding="utf-8"))


def _component(text: str) -> str:
    cleaned = _UNSAFE.sub("_", text).strip("._") or "unknown"
    return "_data" if cleaned == "data" else cleaned


def samples_file_name(run: ExportedRun) -> str:
    """``<uuid4>_samples.jsonl``, the same for every export of one run (so a second export replaces the first)."""
    digest = hashlib.sha256(f"culturebias/{run.summary.run_id}".encode()).digest()
    return f"{uuid.UUID(bytes=digest[:16], version=4)}_samples.jsonl"


def datastore_path(run: ExportedRun, model_id: str, name: str) -> str:
    """The file's canonical path in the Every Eval Ever datastore: ``data/<collection>/<developer>/<model>/<name>``;
    a Hugging Face id gives developer and model, any other name (a local path) developer ``local``."""
    developer, model = model_id.split("/") if _HF_ID.match(model_id) else ("local", Path(model_id.rstrip("/")).name or model_id)
    return f"data/{_component(run.title)}/{_component(developer)}/{_component(model)}/{name}"


def _text(value: Any) -> str:  # Any: a metadata or score value
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _reference(metadata: dict[str, Any]) -> list[str]:  # Any: JSON documents and their values
    options, index = metadata.get("options"), metadata.get("answer_index")
    if isinstance(options, str) and isinstance(index, int):
        try:
            values = json.loads(options)
        except ValueError:
            return []
        if isinstance(values, list) and 0 <= index < len(values):
            return [str(values[index])]
    return []


def _score(payload: dict[str, Any]) -> tuple[float, str]:  # Any: JSON documents and their values
    own = payload["scores"].get("score")
    if own is not None:
        return float(own), "score"
    if payload["correct"] is not None:
        return (1.0 if payload["correct"] else 0.0), "correct"
    return 0.0, "none"


def instance_record(run: ExportedRun, record: Any, evaluation_id: str, model_id: str) -> dict[str, Any]:  # Any: an ItemRecord; JSON
    """One item record as one Every Eval Ever instance-level record."""
    payload = item_payload(record)  # redacted as the store keeps it
    texts: list[str] = payload["texts"]
    raw = payload["prompt"] if payload["prompt"] is not None else "\n".join(texts)
    reference = _reference(payload["metadata"])
    score, basis = _score(payload)
    metadata = {
        "benchmark": payload["benchmark"],
        "run_id": run.summary.run_id,
        "score_basis": basis,
        **({"outcome": payload["outcome"]} if payload["outcome"] is not None else {}),
        "correct": "not applicable" if payload["correct"] is None else str(payload["correct"]).lower(),
        **({"loglikelihoods": json.dumps(payload["loglikelihoods"])} if payload["loglikelihoods"] else {}),
        **{f"score.{k}": _text(v) for k, v in payload["scores"].items() if v is not None},
        **{f"meta.{k}": _text(v) for k, v in payload["metadata"].items() if v is not None},
    }
    # A scoring protocol asked nothing: its "answer" is the option it scored likeliest, not a reply.
    scored = bool(payload["loglikelihoods"]) or payload["answer"] is None
    answer = None if scored else payload["answer"]
    if scored and payload["answer"] is not None:
        metadata["answer"] = payload["answer"]
    attribution = []
    if payload["parsed"] is not None:
        attribution.append({
            "turn_idx": 0,
            "source": "input.choices" if scored else "output.raw",
            "extracted_value": payload["parsed"],
            "extraction_method": "highest log-likelihood" if scored else f"culturebias {run.summary.benchmark} parser",
            "is_terminal": True,
        })
    return {
        "schema_version": samples_schema()["version"],
        "evaluation_id": evaluation_id,
        "model_id": model_id,
        "evaluation_name": run.title,
        "sample_id": payload["item_id"],
        "sample_hash": hashlib.sha256(json.dumps({"raw": raw, "reference": reference}, sort_keys=True,
                                                 separators=(",", ":")).encode("utf-8")).hexdigest(),
        "interaction_type": "single_turn",
        "input": {"raw": raw, "reference": reference, "choices": texts or None},
        "output": {"raw": [answer] if answer is not None else []},
        "messages": None,
        "answer_attribution": attribution,
        "evaluation": {"score": score, "is_correct": payload["correct"] is True},
        "metadata": metadata,
    }


def samples_lines(run: ExportedRun, evaluation_id: str, model_id: str) -> list[dict[str, Any]]:  # Any: JSON documents
    """Every item record of the run as an instance record, each checked against the vendored schema."""
    lines = [instance_record(run, record, evaluation_id, model_id) for record in run.items or ()]
    validate_samples(lines, samples_file_name(run))
    return lines


def validate_samples(lines: list[dict[str, Any]], file: str | None = None) -> None:  # Any: JSON documents and their values
    """DataError naming the first line (1-based) and field that break the samples schema; nothing when jsonschema
    (the test extra) is not installed."""
    try:
        import jsonschema
    except ImportError:  # the lines are built to the schema either way
        return
    validator = jsonschema.Draft7Validator(samples_schema())
    for number, line in enumerate(lines, start=1):
        error = next(iter(sorted(validator.iter_errors(line), key=lambda e: list(e.path))), None)
        if error is not None:
            where = "/".join(map(str, error.path)) or "the top"
            raise DataError(f"the Every Eval Ever samples file breaks the schema at {where} (item {line.get('sample_id')}): "
                            f"{error.message}", file=file, row=number)
