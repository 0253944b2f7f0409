"""The BBQ report shows numbers from the typed summary only, and copes with undefined (null) metrics.

Also: KoBBQ and CBBQ summaries round-trip through their JSON, and the
summary.json a run writes validates against ``KoBBQSummary`` / ``CBBQSummary``.
"""

from __future__ import annotations

from typing import Any

import pytest

from culturebias.adapters.reports.bbq_report import BBQReport
from culturebias.testing.scripted import ScriptedGenerator
from culturebias.domain.kobbq.summary import KoBBQSummary
from culturebias.domain.cbbq.summary import CBBQSummary
from culturebias.testing.context import run_with_fakes


def envelope(benchmark: str, metrics: dict, counts: dict, details: dict, notes: list[str] | None = None) -> dict[str, Any]:
    return {
        "benchmark": benchmark,
        "run_id": f"{benchmark}-1",
        "created_at": "2026-01-01T00:00:00+00:00",
        "finished_at": "2026-01-01T00:01:00+00:00",
        "culturebias_version": "0.0.0",
        "model": {},
        "data": {"source": "bundled", "fingerprint": "f"},
        "config": {"protocol": {}},
        "config_fingerprint": "c",
        "metrics": metrics,
        "counts": counts,
        "notes": notes or [],
        "details": details,
    }


def cell(mean, std, per_prompt):
    return {"mean": mean, "std": std, "n_prompts": 2, "per_prompt": per_prompt}


def kobbq_summary() -> KoBBQSummary:
    block = {
        "acc_amb": cell(None, None, {"1": None, "2": None}),
        "acc_dis": cell(0.625, 0.125, {"1": 0.5, "2": 0.75}),
        "diff_bias_amb": cell(None, None, {"1": None, "2": None}),
        "diff_bias_dis": cell(0.25, 0.0, {"1": 0.25, "2": 0.25}),
        "ooc_ratio": cell(0.5, 0.0, {"1": 0.5, "2": 0.5}),
        "bounds": {"1": {"diff_bias_amb_bound": None, "diff_bias_dis_bound": 1.0, "diff_bias_amb_within_bound": None, "diff_bias_dis_within_bound": True}},
        "counts": {"1": {"n_total": 4, "n_ooc": 2, "n_b": 2, "n_bb": 1, "n_bc": 1}},
    }
    metrics = {
        "mode": "generate",
        "chat_template": False,
        "permutations": [0],
        "permutation_scheme": "cyclic",
        "prompts": ["1", "2"],
        "unknown_wording": {"1": "알 수 없음", "2": "보기 중 답을 찾을 수 없음"},
        "aggregate": "pooled",
        "std_ddof": 1,
        "overall": block,
        "by_label": {"ST": block},
        "by_category": {"age": block},
        "statistics": {},
    }
    counts = {"items_in_data": 5, "items_skipped": 1, "items": 4, "answers": 8, "out_of_choice": 4, "out_of_choice_by_prompt": {"1": 2, "2": 2}}
    details = {
        "skips": [{"sample_id": "x-1", "file": "f.tsv", "row": 3, "reason": "why"}],
        "template_scores": {"age-001": {"acc_amb": None, "acc_dis": 0.625, "diff_bias_amb": None, "diff_bias_dis": 0.25, "ooc_ratio": 0.5}},
    }
    return KoBBQSummary.model_validate(envelope("kobbq", metrics, counts, details, ["a note"]))


def cbbq_summary() -> CBBQSummary:
    scores = {"s_amb": 0.25, "s_dis": None, "s_total": None, "acc_amb": 0.75, "acc_dis": 0.0, "ooc_ratio": 0.0, "counts": {"n_amb": 4}}
    metrics = {
        "mode": "likelihood",
        "chat_template": True,
        "permutations": [0],
        "permutation_scheme": "cyclic",
        "condition": "q_if",
        "condition_name": "Q+IF",
        "conditions": ["q_if"],
        "weights": {"w1": 0.4, "w2": 0.6},
        "overall_aggregate": "pooled",
        "overall": scores,
        "by_category": {"gender": scores},
        "by_condition": {"q_if": {"overall": scores, "by_category": {"gender": scores}}},
    }
    counts = {
        "items_in_data": 24,
        "items_skipped": 0,
        "items": 6,
        "ambiguous_items": 4,
        "disambiguated_items": 0,
        "biased_answer_unresolved": 2,
        "biased_answer_unresolved_in_data": 2,
        "biased_answer_derivation": {"label": 10, "twin": 9, "groups": 1, "unresolved": 2},
        "answers": 4,
        "out_of_choice": 0,
        "out_of_choice_by_condition": {"q_if": 0},
    }
    details = {"skips": [], "categories": ["gender"], "biased_answer_unresolved_ids": ["gender-amb-1", "gender-amb-2"]}
    return CBBQSummary.model_validate(envelope("cbbq", metrics, counts, details))


def test_kobbq_report(tmp_path):
    paths = BBQReport().write(kobbq_summary(), tmp_path)
    assert [p.name for p in paths] == ["report.md", "bbq_bias.png"]
    text = paths[0].read_text(encoding="utf-8")
    assert "| Acc (disambiguated) | 0.625 | 0.125 | 0.500 | 0.750 |" in text
    assert "| Acc (ambiguous) | – | – | – | – |" in text
    assert "| age | – ± – | 0.625 ± 0.125 |" in text
    assert "| 2 | 보기 중 답을 찾을 수 없음 |" in text
    assert "out_of_choice_by_prompt: 1: 2, 2: 2" in text
    assert "skipped x-1 (f.tsv, row 3): why" in text and "- a note" in text


def test_a_skip_with_a_detail_shows_it(tmp_path):
    summary = kobbq_summary()
    skip = summary.details.skips[0].model_copy(update={"detail": "answer '손녀' is not among the choices"})
    summary.details.skips = [skip]
    text = BBQReport().write(summary, tmp_path)[0].read_text(encoding="utf-8")
    assert "skipped x-1 (f.tsv, row 3): why — answer '손녀' is not among the choices" in text


def test_cbbq_report(tmp_path):
    paths = BBQReport().write(cbbq_summary(), tmp_path)
    text = paths[0].read_text(encoding="utf-8")
    assert "| Q+IF | 0.250 | – | – | 0.750 | 0.000 | 0.000 |" in text
    assert "| gender | 0.250 | – | – |" in text
    assert "| 10 | 9 | 1 | 2 |" in text
    assert "S_total = 0.40 · S_amb + 0.60 · S_dis" in text


@pytest.mark.parametrize("make", [kobbq_summary, cbbq_summary])
def test_representative_summaries_round_trip(make):
    summary = make()
    assert type(summary).model_validate_json(summary.to_json()) == summary
    # keys absent from a run without predictions stay absent
    assert "predictions" not in summary.as_dict()["details"]


@pytest.mark.parametrize(
    ("benchmark", "model", "options"),
    [
        ("kobbq", KoBBQSummary, {"mode": "generate", "prompts": "1,2", "limit": 12}),
        ("cbbq", CBBQSummary, {"mode": "generate", "condition": "q,q_if", "limit": 3}),
    ],
)
def test_the_summary_json_of_a_run_validates_and_round_trips(tmp_path, benchmark, model, options):
    generator = ScriptedGenerator(lambda request, rendered: "A")
    result = run_with_fakes(benchmark, options=options, out_dir=tmp_path, generator=generator)
    assert isinstance(result.summary, model)
    written = model.model_validate_json((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert written == result.summary
    assert model.model_validate_json(written.to_json()) == written
    assert written.details.predictions is not None and len(written.details.predictions) == written.counts.answers
