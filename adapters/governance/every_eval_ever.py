"""A run as one Every Eval Ever document (evaleval's cross-framework schema, vendored in ``every_eval_ever/``).

One evaluation result per defined headline, its 95% interval in
``score_details.uncertainty.confidence_interval`` (with the resampling units as
``num_samples`` and the resamples as ``num_bootstrap_samples``), its range and
direction in ``metric_config``, and an LLM judge (McBE) in ``llm_scoring``.
The document is checked against the vendored schema when jsonschema is installed. ``write_every_eval_ever``
writes it with the per-item samples file beside it (``every_eval_ever_samples.py``).
"""

from __future__ import annotations

import hashlib
import json
import time
from functools import cache
from pathlib import Path
from typing import Any

from culturebias.adapters.governance.every_eval_ever_samples import datastore_path, samples_file_name, samples_lines
from culturebias.adapters.governance.exported_run import ExportedRun
from culturebias.application.out_folder import write_text_atomically
from culturebias.domain.caveats import items_words
from culturebias.domain.errors import DataError

SCHEMA_FILE = Path(__file__).resolve().parent / "every_eval_ever" / "eval.schema.json"
LOCAL_BACKENDS = {"hf", "onnx"}
JUDGE_PROMPTS = "the judge prompts of culturebias (domain/mcbe/prompts*.py), per task"


@cache
def schema() -> dict[str, Any]:  # Any: JSON documents and their values
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def _strings(values: dict[str, Any]) -> dict[str, str]:  # Any: JSON documents and their values
    return {key: str(value) for key, value in values.items() if value is not None}


def _model_info(model: str, backend: str | None) -> dict[str, Any]:  # Any: JSON documents and their values
    deployment = "self_deployed" if backend in LOCAL_BACKENDS else "externally_managed" if backend == "openai" else "unknown"
    return {
        "name": model,
        "id": model,
        "inference_platform": backend or "unknown",
        "additional_details": {"deployment_type": deployment, "model_availability": "unknown",
                               **_strings({"backend": backend})},
    }


def _caveat_details(run: ExportedRun) -> dict[str, str]:
    """The run's caveats as string details: all of them in words, and their kinds."""
    caveats = run.caveats()
    if not caveats:
        return {}
    return {"caveats": " ".join(c.text for c in caveats), "caveat_kinds": ",".join(dict.fromkeys(c.kind for c in caveats))}


def _bound(value: float | None, unbounded: str) -> float | str:
    return unbounded if value is None else value


def _result(run: ExportedRun, headline: Any) -> dict[str, Any]:  # Any: a headline of the exported run
    s, metric = run.summary, headline.metric
    config: dict[str, Any] = {  # Any: JSON documents and their values
        "evaluation_description": metric.meaning or metric.label,
        "metric_id": f"culturebias.{s.benchmark}.{metric.name}",
        "metric_name": metric.label,
        "metric_kind": metric.name,
        "metric_unit": metric.unit or "score",
        "lower_is_better": metric.direction == "lower",
        "score_type": "continuous",
        "min_score": _bound(metric.low, "-Infinity"),
        "max_score": _bound(metric.high, "Infinity"),
        "additional_details": _strings({"direction": metric.direction_words(), "target": metric.target}),
    }
    judge = s.model.judge
    if judge is not None:
        config["llm_scoring"] = {"judges": [{"model_info": _model_info(judge.model, judge.backend)}],
                                 "input_prompt": JUDGE_PROMPTS}
    score: dict[str, Any] = {"score": headline.value}  # Any: JSON documents and their values
    caveats = run.caveats_of(metric.name)
    if caveats:
        score["details"] = {"caveats": " ".join(c.text for c in caveats), "caveat_kinds": ",".join(c.kind for c in caveats)}
    bounds = headline.bounds()
    if bounds is not None:
        i = headline.interval
        score["uncertainty"] = {
            "confidence_interval": {"lower": bounds[0], "upper": bounds[1], "confidence_level": i.level,
                                    "method": f"bootstrap ({i.method}) over {i.unit}s"},
            "num_samples": i.n,
            "num_bootstrap_samples": i.resamples,
        }
    return {
        "evaluation_result_id": f"{s.benchmark}.{metric.name}",
        "evaluation_name": f"{run.title}: {metric.label}",
        "source_data": {"dataset_name": run.title, "source_type": "other",
                        "additional_details": _strings({"data_fingerprint": s.data.fingerprint, "data_source": s.data.source})},
        "evaluation_timestamp": s.finished_at,
        "metric_config": config,
        "score_details": score,
    }


def every_eval_ever(run: ExportedRun, organization: str = "unknown") -> dict[str, Any]:  # Any: JSON documents and their values
    """The aggregate document of the run, checked against the vendored schema."""
    document = _document(run, organization)
    _validate(document)
    return document


def _document(run: ExportedRun, organization: str = "unknown") -> dict[str, Any]:  # Any: JSON documents and their values
    s = run.summary
    model, backend = run.model()
    retrieved = str(int(time.time()))
    document = {
        "schema_version": schema()["version"],
        "evaluation_id": f"{s.benchmark}/{model}/{retrieved}",
        "evaluation_timestamp": s.finished_at,
        "retrieved_timestamp": retrieved,
        "source_metadata": {"source_name": "culturebias", "source_type": "evaluation_run",
                            "source_organization_name": organization, "evaluator_relationship": "other"},
        "eval_library": {"name": "culturebias", "version": s.culturebias_version,
                         "additional_details": _strings({"run_id": s.run_id, "config_fingerprint": s.config_fingerprint,
                                                         "limit": s.limit.n if s.limit else None,
                                                         "items": items_words(s), **_caveat_details(run),
                                                         # a headline a validity rule leaves not measured has no
                                                         # result; why (PROTOCOLS §6)
                                                         **{f"not_measured.{h.metric.name}": h.not_measured
                                                            for h in run.headline_values() if h.not_measured}})},
        "model_info": _model_info(model, backend),
        "evaluation_results": [_result(run, h) for h in run.headline_values() if h.value is not None],
    }
    return document


def write_every_eval_ever(run: ExportedRun, out: Path) -> list[Path]:
    """The aggregate document at ``out`` and, where the run has item records, its samples file beside it
    (``every_eval_ever_samples``), named in the document's ``detailed_evaluation_results``. Both are checked
    against the vendored schemas before either is written (``DataError`` naming the line and field: nothing
    written); each is written whole or not at all. Returns the files written."""
    document = _document(run)
    samples: tuple[Path, str] | None = None
    if run.items:
        name = samples_file_name(run)
        model_id = document["model_info"]["id"]
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in samples_lines(run, document["evaluation_id"], model_id))
        document["detailed_evaluation_results"] = {
            "format": "jsonl", "file_path": datastore_path(run, model_id, name), "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(text.encode("utf-8")).hexdigest(), "total_rows": len(run.items),
            "additional_details": {"local_file": name},
        }
        samples = (out.parent / name, text)
    _validate(document)
    if samples is None:
        write_text_atomically(out, json.dumps(document, ensure_ascii=False, indent=2) + "\n")
        return [out]
    write_text_atomically(*samples)
    try:
        write_text_atomically(out, json.dumps(document, ensure_ascii=False, indent=2) + "\n")
    except BaseException:
        samples[0].unlink(missing_ok=True)  # no samples file without the document that names it
        raise
    return [out, samples[0]]


def _validate(document: dict[str, Any]) -> None:  # Any: JSON documents and their values
    try:
        import jsonschema
    except ImportError:  # the schema check is the test extra's; the document is built to it either way
        return
    errors = sorted(jsonschema.Draft7Validator(schema()).iter_errors(document), key=lambda e: list(e.path))
    if errors:
        where = "/".join(map(str, errors[0].path))
        raise DataError(f"the Every Eval Ever document breaks the schema at {where or 'the top'}: {errors[0].message}")
