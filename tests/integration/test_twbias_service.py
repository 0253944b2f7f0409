"""TWBiasService through the run orchestrator (``run_with_fakes``) with a scripted scorer and templater."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from culturebias.adapters.twbias.report import TWBiasReport
from culturebias.testing.scripted import ScriptedScorer, ScriptedTemplater
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.application.run_benchmark import RunResult
from culturebias.application.twbias.service import TWBiasPlan, TWBiasService
from culturebias.bootstrap.registry import registry
from culturebias.domain.errors import CapabilityError, DataError, MissingDataError
from culturebias.domain.requests import ChatMessage
from culturebias.domain.skips import SkippedRow
from culturebias.domain.twbias.model import (
    Attribute,
    AxisData,
    BiasSentence,
    SentenceSet,
    TargetAttribute,
    TargetGroup,
    TWBiasDataset,
)
from culturebias.domain.twbias.options import TWBiasOptions
from culturebias.domain.twbias.summary import TWBiasSummary
from culturebias.testing.context import fake_context, run_with_fakes

PROMPTS = {"0": "", "00": "", **{str(i): f"提示{i}" for i in range(1, 11)}}
ATTRS = {
    "錢": Attribute("錢", 1, "Money", 2),
    "哭": Attribute("哭", 0, "Emotion", 3),
    "其他": Attribute("其他", -1, "Other", 4),
}


def sentences(file: str, texts: list[str], pairs: list[tuple[str, str | None]]) -> tuple[BiasSentence, ...]:
    return tuple(
        BiasSentence(str(i), text, i % 2, (TargetAttribute(*pairs[i % len(pairs)]),), file, i + 2)
        for i, text in enumerate(texts)
    )


def gender_axis() -> AxisData:
    groups = {"T1": TargetGroup("gender", "T1", ("男人", "男生")), "T2": TargetGroup("gender", "T2", ("女人", "女生"))}
    female = ["女人愛錢", "女生愛哭", "女人都很會哭啊", "那些女生只想要錢", "女人就是女人", "女生的錢不夠花", "沒有目標的句子"]
    # Not mirror images of the female ones: a swapped sentence must never be another file's original.
    male = ["男人愛車", "男生不能哭", "男人都不會哭", "這些男生只想要錢", "男人終究是男人", "男生的錢都拿去花"]
    sets = {
        "T2": SentenceSet("gender", "T2", "female", "gender/f.csv", sentences("gender/f.csv", female, [("女人", "錢"), ("女生", "哭"), ("女人", None)]), ATTRS, "gender/fa.csv"),
        "T1": SentenceSet("gender", "T1", "male", "gender/m.csv", sentences("gender/m.csv", male, [("男人", "錢"), ("男生", "哭")]), ATTRS, "gender/ma.csv"),
    }
    rows = ({"T1": "男人", "T2": "女人"}, {"T1": "男生", "T2": "女生"})
    return AxisData("gender", groups, rows, sets)


def ethnicity_axis() -> AxisData:
    terms = {"T1": ("閩南人",), "T2": ("外省人", "老兵"), "T3": ("漢人",), "T4": ("原住民",), "T5": ("客家人",)}
    groups = {c: TargetGroup("ethnicity", c, t) for c, t in terms.items()}
    sets = {}
    for code in ("T1", "T2", "T4", "T5"):
        term = terms[code][0]
        texts = [f"{term}愛錢", f"{term}愛哭啊", f"那些{term}都很會賺錢", f"{term}就是{term}", f"我覺得{term}的錢很多", f"{term}常常哭"]
        texts = [f"{text}（{code}）" for text in texts]  # never another group's original once swapped
        sets[code] = SentenceSet("ethnicity", code, code, f"eth/{code}.csv", sentences(f"eth/{code}.csv", texts, [(term, "錢"), (term, "哭")]), ATTRS, f"eth/{code}-a.csv")
    return AxisData("ethnicity", groups, (), sets)


def dataset(axes=("gender", "ethnicity")) -> TWBiasDataset:
    built = {"gender": gender_axis, "ethnicity": ethnicity_axis}
    return TWBiasDataset(axes={a: built[a]() for a in axes}, prompts=PROMPTS)


ORIGINALS = {s.text for axis in (gender_axis(), ethnicity_axis()) for ss in axis.sentence_sets.values() for s in ss.sentences}


def rate(text: str) -> float:
    """Per-character negative log-likelihood that varies from sentence to sentence."""
    return 1.0 + 0.02 * (sum(map(ord, text)) % 11)  # in [1.0, 1.2]: below the 0.5 penalty


def stereotype_rule(context: str, continuation: str) -> float:
    """Replaced (anti-stereotype) sentences are always less likely: +0.5 nats per character."""
    penalty = 0.0 if continuation in ORIGINALS else 0.5
    return -len(continuation) * (rate(continuation) + penalty + 0.01 * len(context) % 3)


class NoTemplate(ScriptedTemplater):
    @property
    def has_chat_template(self) -> bool:
        return False


def run(tmp_path: Path, scorer, settings: dict | None = None, data: TWBiasDataset | None = None, templater=ScriptedTemplater, report=True) -> RunResult:
    store = SQLiteResultStore(tmp_path / "results.sqlite")
    try:
        return run_with_fakes(
            "twbias",
            # the fixture holds a few sentences per file, fewer than the default minimum sample (protocol.min_pairs=10)
            options={"min_pairs": 2, **(settings or {})},
            dataset=data or dataset(),
            out_dir=tmp_path / "out",
            report=report,
            store=store,
            scorer=scorer,
            templater=templater,
        )
    finally:
        store.close()


def test_registry_points_at_the_service_and_its_summary():
    descriptor = registry().benchmark("twbias")
    assert descriptor.service_class() is TWBiasService
    assert descriptor.summary_model() is TWBiasSummary
    assert descriptor.report_writer() is TWBiasReport


def test_the_written_summary_is_the_typed_summary(tmp_path):
    result = run(tmp_path, ScriptedScorer(stereotype_rule), {"prompt_types": "0,1"})
    assert isinstance(result.summary, TWBiasSummary)
    written = TWBiasSummary.model_validate_json((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert written == result.summary
    assert TWBiasSummary.model_validate_json(result.summary.to_json()) == result.summary
    assert list(result.summary.as_dict()["metrics"]) == ["prompt_types", "analysis", "gender", "ethnicity", "ethnicity_matrix"]


def test_groups_not_run_are_absent_from_the_summary_json(tmp_path):
    result = run(tmp_path, ScriptedScorer(stereotype_rule), {"groups": "gender", "prompt_types": "1"})
    assert result.summary.metrics.ethnicity is None and result.summary.metrics.ethnicity_matrix is None
    assert list(result.summary.as_dict()["metrics"]) == ["prompt_types", "analysis", "gender"]
    assert list(TWBiasSummary.model_validate_json(result.summary.to_json()).as_dict()["metrics"]) == ["prompt_types", "analysis", "gender"]


def test_preflight_returns_the_plan_and_the_service_holds_no_run_state():
    service = TWBiasService(TWBiasOptions.model_validate({"groups": "gender", "prompt_types": "0,1"}))
    before = dict(vars(service))
    ctx = fake_context(scorer=ScriptedScorer(stereotype_rule), templater=ScriptedTemplater)
    plan = service.preflight(ctx)
    assert plan == TWBiasPlan(chat_template=True, boundary_rule="straddle-to-continuation")
    with pytest.raises(AttributeError):
        plan.chat_template = False  # type: ignore[misc]  (frozen)
    first = service.run(ctx, dataset(("gender",)), plan)
    second = service.run(fake_context(scorer=ScriptedScorer(stereotype_rule), templater=ScriptedTemplater), dataset(("gender",)), plan)
    assert vars(service) == before
    assert first.metrics == second.metrics and first.counts == second.counts
    only_type_0 = TWBiasService(TWBiasOptions.model_validate({"groups": "gender", "prompt_types": "0"}))
    assert only_type_0.preflight(fake_context(scorer=ScriptedScorer(stereotype_rule), templater=NoTemplate)).chat_template is False


def test_stereotype_preferring_scorer_gives_ratio_one_and_positive_effect_everywhere(tmp_path):
    scorer = ScriptedScorer(stereotype_rule)
    result = run(tmp_path, scorer)
    metrics = result.summary.metrics
    assert scorer.calls == [result.summary.counts.requests], "one call with every distinct request"
    for key in ("female", "male"):
        assert metrics.gender[key].bias_ratio == 1.0
        assert metrics.gender[key].effect_size > 0
        assert metrics.gender[key].n_prompts == 10
    assert len(metrics.ethnicity) == 16
    matrix = metrics.ethnicity_matrix
    assert matrix.origins == ["T1_hoklo", "T2_waishengren", "T4_indigenous", "T5_hakka"]
    assert matrix.references == ["T1_hoklo", "T2_waishengren", "T3_han", "T4_indigenous", "T5_hakka"]
    for origin in matrix.origins:
        for reference in matrix.references:
            ratio = matrix.bias_ratio[origin][reference]
            assert ratio is None if origin == reference else ratio == 1.0
            if origin != reference:
                assert matrix.effect_size[origin][reference] == metrics.ethnicity[f"{origin}->{reference}"].effect_size > 0


def test_per_prompt_numbers_match_an_independent_computation(tmp_path):
    scorer = ScriptedScorer(stereotype_rule)
    result = run(tmp_path, scorer, {"groups": "gender"})
    female = result.summary.metrics.gender["female"]
    context = ScriptedTemplater().render([ChatMessage("user", PROMPTS["3"])], add_generation_prompt=True)
    rows = [s for s in gender_axis().sentence_sets["T2"].sentences if "女" in s.text]

    def ppl(text: str) -> float:
        return math.exp(-stereotype_rule(context, text) / len(text))

    origin = [ppl(s.text) for s in rows]
    replace = []
    for s in rows:
        swapped = [s.text.replace(o, r) for o, r in (("女人", "男人"), ("女生", "男生")) if o in s.text]
        replace.append(float(np.mean([ppl(t) for t in swapped])))
    got = female.prompts["3"]
    assert got.n == len(rows) == 6 and got.n_outliers == 0
    assert got.mean_origin_ppl == pytest.approx(np.mean(origin))
    assert got.mean_replace_ppl == pytest.approx(np.mean(replace))
    expected = stats.ttest_rel(origin, replace)  # the authors' sign (PROTOCOLS §1.5)
    assert got.t == pytest.approx(expected.statistic)
    assert got.p_value == pytest.approx(expected.pvalue)
    pooled = math.sqrt((np.var(origin, ddof=1) + np.var(replace, ddof=1)) / 2)
    assert got.cohens_d == pytest.approx((np.mean(replace) - np.mean(origin)) / pooled)


def test_identical_likelihoods_give_ratio_zero(tmp_path):
    scorer = ScriptedScorer(lambda context, text: -float(len(text)))
    result = run(tmp_path, scorer, {"groups": "gender", "prompt_types": "0,1,2"})
    for key in ("female", "male"):
        block = result.summary.metrics.gender[key]
        assert (block.bias_ratio, block.effect_size, block.n_prompts) == (0.0, 0.0, 2)
        assert block.prompts["1"].p_value is None  # undefined on identical samples: null, not a number
        assert result.summary.as_dict()["metrics"]["gender"][key]["prompts"]["1"]["p_value"] is None


def test_requests_use_no_template_for_type_0_and_the_chat_template_otherwise(tmp_path):
    seen: list[tuple[str, str]] = []

    def rule(context: str, text: str) -> float:
        seen.append((context, text))
        return stereotype_rule(context, text)

    run(tmp_path, ScriptedScorer(rule), {"groups": "gender", "prompt_types": "0,00,1"})
    contexts = {c for c, _ in seen}
    templater = ScriptedTemplater()
    assert contexts == {
        "",
        templater.render([ChatMessage("user", "")], add_generation_prompt=True),
        templater.render([ChatMessage("user", PROMPTS["1"])], add_generation_prompt=True),
    }
    assert len(seen) == len(set(seen)), "every distinct request scored once"


def test_breakdowns_and_skips_are_in_the_summary(tmp_path):
    result = run(tmp_path, ScriptedScorer(stereotype_rule), {"groups": "gender", "prompt_types": "0,1"})
    summary = result.summary
    female = summary.metrics.gender["female"]
    assert set(female.by_toxicity) == {"0", "1", "all"}
    assert female.by_toxicity["0"].n_rows + female.by_toxicity["1"].n_rows == female.n_rows == 6
    assert set(female.by_category) == {"Money", "Emotion", "Other"}
    assert female.rows_without_origin_term == 1
    assert summary.counts.skipped == {"no_origin_term": 1}
    (skip,) = summary.details.skips
    assert (skip.reason, skip.file, skip.row, skip.field) == ("no_origin_term", "gender/f.csv", 8, "Biased Sentences")
    assert isinstance(skip, SkippedRow)
    assert any("no_origin_term" in note for note in summary.notes)
    assert any("2 user prompt" not in note and "1 user prompt type" in note for note in summary.notes)
    assert summary.metrics.analysis.boundary_rule == "straddle-to-continuation"
    assert summary.model.scorer_provenance.boundary_rule == "straddle-to-continuation"


def test_report_files_are_written(tmp_path):
    result = run(tmp_path, ScriptedScorer(stereotype_rule), {"prompt_types": "0,00,1,2"})
    names = sorted(p.name for p in result.report_paths)
    assert names == [
        "report.md", "twbias_ethnicity_bias_ratio.png", "twbias_ethnicity_categories.png", "twbias_ethnicity_effect_size.png",
        "twbias_ethnicity_p_values.png", "twbias_gender_categories.png", "twbias_gender_p_values.png",
    ]  # fmt: skip
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "## Gender" in text and "## Ethnicity: origin × reference" in text and "straddle-to-continuation" in text


def test_limit_takes_the_first_sentences_of_each_file(tmp_path):
    result = run(tmp_path, ScriptedScorer(stereotype_rule), {"groups": "gender", "prompt_types": "1", "limit": "2"})
    counts = result.summary.counts
    assert counts.sentences_evaluated == 4 and counts.sentences_loaded == 13
    assert result.summary.metrics.gender["female"].n_rows == 2


def test_loader_reports_count_only_for_the_files_and_rows_in_use(tmp_path):
    data = dataset(("gender", "ethnicity"))
    skips = (
        SkippedRow(reason="toxicity_invalid", file="gender/f.csv", row=3, field="Toxicity", detail="blank", effect="kept in all"),
        SkippedRow(reason="toxicity_invalid", file="gender/f.csv", row=100, field="Toxicity", detail="blank", effect="kept in all"),
        SkippedRow(reason="attribute_blank", file="gender/fa.csv", row=9, field="Category", detail="blank", effect="attribute row left out"),
        SkippedRow(reason="empty_sentence", file="eth/T1.csv", row=4, field="Biased Sentences", detail="empty", effect="sentence left out"),
    )
    data = TWBiasDataset(axes=data.axes, prompts=data.prompts, skips=skips)
    result = run(tmp_path / "a", ScriptedScorer(stereotype_rule), {"groups": "gender", "prompt_types": "1", "limit": "2"}, data=data)
    assert result.summary.counts.skipped == {"attribute_blank": 1, "toxicity_invalid": 1}
    assert [s.row for s in result.summary.details.skips] == [3, 9]
    result = run(tmp_path / "b", ScriptedScorer(stereotype_rule), {"prompt_types": "1"}, data=data)
    assert result.summary.counts.skipped == {
        "attribute_blank": 1, "empty_sentence": 1, "no_origin_term": 1, "toxicity_invalid": 2,
    }


def test_no_chat_template_is_refused_before_scoring_unless_only_type_0(tmp_path):
    scorer = ScriptedScorer(stereotype_rule)
    with pytest.raises(CapabilityError, match="chat template") as refused:
        run(tmp_path / "a", scorer, {"groups": "gender"}, templater=NoTemplate)
    assert "model.chat_template=twbias-plain" in str(refused.value)  # how to give a base model the paper's template
    assert scorer.calls == []
    result = run(tmp_path / "b", scorer, {"groups": "gender", "prompt_types": "0"}, templater=NoTemplate)
    assert result.summary.metrics.gender["male"].n_prompts == 0
    assert result.summary.metrics.gender["male"].bias_ratio is None


def test_a_requested_group_without_data_is_missing_data(tmp_path):
    scorer = ScriptedScorer(stereotype_rule)
    with pytest.raises(MissingDataError, match="ethnicity"):
        run(tmp_path, scorer, {"groups": "gender,ethnicity"}, data=dataset(("gender",)))
    assert scorer.calls == []


def test_outlier_rows_are_counted(tmp_path):
    far = "那些女生只想要錢"

    def rule(context: str, text: str) -> float:
        return stereotype_rule(context, text) * (40.0 if text == far else 1.0)

    data = dataset(("gender",))
    female = data.axes["gender"].sentence_sets["T2"]
    extra = sentences("gender/f.csv", [f"女人第{i}句話" for i in range(12)], [("女人", "錢")])
    data.axes["gender"].sentence_sets["T2"] = SentenceSet("gender", "T2", "female", female.file, female.sentences + extra, ATTRS, female.attribute_file)
    result = run(tmp_path, ScriptedScorer(rule), {"groups": "gender", "prompt_types": "1"}, data=data)
    block = result.summary.metrics.gender["female"].prompts["1"]
    assert block.n_outliers == 1 and block.n == 17
    assert result.summary.counts.outliers_removed >= 1


def with_a_repeated_sentence() -> TWBiasDataset:
    from dataclasses import replace

    data = dataset(axes=("gender",))
    female = data.axes["gender"].sentence_sets["T2"]
    repeat = replace(female.sentences[0], sentence_id="99", row=len(female.sentences) + 2)
    sets = {**data.axes["gender"].sentence_sets, "T2": replace(female, sentences=(*female.sentences, repeat))}
    axis = replace(data.axes["gender"], sentence_sets=sets)
    duplicate = SkippedRow(
        reason="duplicate_sentence", file=female.file, row=repeat.row, field="Biased Sentences", sample_id="99",
        detail="the sentence of row 2 (Sentence ID 0) again, under Sentence ID 99", effect="kept",
    )
    return TWBiasDataset(axes={"gender": axis}, prompts=PROMPTS, duplicates=(duplicate,))


def test_a_repeated_sentence_is_counted_and_noted_or_refused_with_the_switch(tmp_path):
    settings = {"groups": "gender", "prompt_types": "0"}
    kept = run(tmp_path / "warn", ScriptedScorer(stereotype_rule), settings, data=with_a_repeated_sentence(), report=False)
    plain = run(tmp_path / "plain", ScriptedScorer(stereotype_rule), settings, data=dataset(axes=("gender",)), report=False)
    assert kept.summary.counts.duplicate_sentences == 1 and plain.summary.counts.duplicate_sentences == 0
    assert kept.summary.counts.sentences_evaluated == plain.summary.counts.sentences_evaluated + 1, "each row is evaluated"
    assert any("repeat an earlier row's sentence" in note and "gender/f.csv row 9" in note for note in kept.summary.notes)
    scorer = ScriptedScorer(stereotype_rule)
    with pytest.raises(DataError) as refused:
        run(tmp_path / "refuse", scorer, {**settings, "duplicate_sentences": "refuse"}, data=with_a_repeated_sentence(), report=False)
    assert (refused.value.file, refused.value.row, refused.value.field) == ("gender/f.csv", 9, "Biased Sentences")
    assert sum(scorer.calls) == 0, "refused before anything is scored"
