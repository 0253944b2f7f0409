"""CBBQ: the paper's CoT sentence (translated, overridable) and the overall score as the mean over categories."""

from __future__ import annotations

import pytest

from culturebias.domain.bbq.answer_order import shown_order
from culturebias.domain.bbq.keys import AnswerKey
from culturebias.domain.bbq.model import QAItem
from culturebias.domain.cbbq.wording import PAPER_COT, TRANSLATED
from culturebias.testing.context import run_with_fakes
from culturebias.testing.scripted import ScriptedGenerator, ScriptedTemplater


def _letter(item: QAItem, permutation: int, choice: int) -> str:
    return "ABC"[shown_order(3, permutation).index(choice)]


def _run(tmp_path, options, reply, templater=None):
    from culturebias.adapters.cbbq.files import CBBQFiles

    dataset = CBBQFiles(None).load()
    items = {i.sample_id: i for i in dataset.items}

    def answer(request, rendered):
        key = AnswerKey.decode(request.key)
        return reply(items[key.sample_id], key, rendered)

    return run_with_fakes(
        "cbbq", options=options, dataset=dataset, out_dir=tmp_path, generator=ScriptedGenerator(answer), templater=templater
    )


def gender_biased_region_half_lost(item: QAItem, key: AnswerKey, _rendered: str) -> str:
    """Gender: the biased answer; region: out of choice on the first two ambiguous items, unknown otherwise."""
    if item.category == "gender":
        return _letter(item, key.permutation, item.biased_index if item.biased_index is not None else 0)
    if item.sample_id in ("region-amb-1", "region-amb-2"):
        return "我不知道该怎么回答"
    return _letter(item, key.permutation, item.unknown_index)


@pytest.fixture
def options():
    return {"mode": "generate", "categories": "gender,region", "limit": 4}


def test_the_overall_score_is_the_mean_over_categories_by_default_and_pooled_on_request(tmp_path, options):
    mean = _run(tmp_path / "mean", options, gender_biased_region_half_lost).summary.metrics
    pooled = _run(tmp_path / "pooled", {**options, "overall": "pooled"}, gender_biased_region_half_lost).summary.metrics
    assert mean.overall_aggregate == "category_mean" and pooled.overall_aggregate == "pooled"
    gender, region = mean.by_category["gender"], mean.by_category["region"]
    assert gender.s_amb == 1.0 and region.s_amb == 0.0
    assert region.counts.n_amb < gender.counts.n_amb  # the categories weigh differently when pooled
    assert mean.overall.s_amb == pytest.approx(0.5)  # each category weighs the same (paper Fig. 7)
    n_biased = gender.counts.n_amb_biased + region.counts.n_amb_biased
    assert pooled.overall.s_amb == pytest.approx(n_biased / (gender.counts.n_amb + region.counts.n_amb))
    assert pooled.overall.s_amb != pytest.approx(0.5)
    report = (tmp_path / "mean" / "report.md").read_text(encoding="utf-8")
    assert "mean over categories" in report


def test_the_cot_turn_asks_the_papers_sentence_in_translation_and_an_option_replaces_it(tmp_path, options):
    asked: list[str] = []

    def reply(item: QAItem, key: AnswerKey, rendered: str) -> str:
        asked.append(rendered)
        return "想一想。" if key.turn == "reasoning" else _letter(item, key.permutation, item.unknown_index)

    cot = {**options, "condition": "q_if_cot", "limit": 1}
    metrics = _run(tmp_path / "t", cot, reply, ScriptedTemplater()).summary.metrics
    assert any(TRANSLATED.cot_sentence in text for text in asked)
    assert not any("一步一步" in text for text in asked)
    wording = metrics.wording
    assert wording is not None and wording.cot_sentence.paper_english == PAPER_COT
    assert "translation" in wording.cot_sentence.source
    report = (tmp_path / "t" / "report.md").read_text(encoding="utf-8")
    assert TRANSLATED.cot_sentence in report and "translation" in report

    asked.clear()
    own = {**cot, "cot_sentence": "请先想想，再作答。", "if_sentence": "请保持公正。"}
    metrics = _run(tmp_path / "o", own, reply, ScriptedTemplater()).summary.metrics
    assert any("请先想想，再作答。" in text and "请保持公正。" in text for text in asked)
    assert not any(TRANSLATED.cot_sentence in text for text in asked)
    assert metrics.wording is not None and metrics.wording.cot_sentence.source == "set by protocol.cot_sentence"


def test_a_plain_q_run_records_no_wording(tmp_path, options):
    metrics = _run(tmp_path, {**options, "limit": 1}, gender_biased_region_half_lost).summary.metrics
    assert metrics.wording is None
