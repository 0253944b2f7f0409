"""The shared summary building blocks keep summary.json's keys where they were (issue 34, point 5).

pydantic serialises inherited fields first (from the last base to the first); these are the key
orders of summary.json before the blocks were shared, so a base that moved a key fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from culturebias.adapters.datasets.unique_ids import note_first_row
from culturebias.adapters.stores.memory_store import MemoryResultStore
from culturebias.domain.bbq.fidelity_summary import LabelTypeScores, TukeyRow
from culturebias.domain.cbbq.summary import CBBQAnswerCounts, CBBQCounts, CBBQMetrics
from culturebias.domain.errors import DataError, PolicyError
from culturebias.domain.kobbq.summary import KoBBQCounts, KoBBQMetrics, KoBBQScoreBlock, TemplateScores
from culturebias.domain.runs import RunManifest
from culturebias.domain.summary_fields import bootstrap_intervals

FOUR = ["acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis"]
ASKED = ["mode", "chat_template", "permutations", "permutation_scheme"]
ITEMS = ["items_in_data", "items_skipped", "items"]

KEY_ORDER = {
    KoBBQMetrics: [*ASKED, "prompts", "unknown_wording", "aggregate", "std_ddof", "overall", "by_label", "by_category",
                   "statistics", "answering", "tests", "evaluator"],
    CBBQMetrics: [*ASKED, "condition", "condition_name", "conditions", "weights", "overall_aggregate", "overall",
                  "by_category", "by_condition", "answering", "reasoning", "wording", "prompt_set", "prompt_source"],
    KoBBQCounts: [*ITEMS, "answers", "out_of_choice", "out_of_choice_by_prompt", "invalid_replies"],
    CBBQCounts: [*ITEMS, "ambiguous_items", "disambiguated_items", "biased_answer_unresolved",
                 "biased_answer_unresolved_in_data", "biased_answer_derivation", "answers", "out_of_choice",
                 "out_of_choice_by_condition", "invalid_replies", "table4", "explained_answers"],
    KoBBQScoreBlock: [*FOUR, "ooc_ratio", "bounds", "counts", "intervals", "acc_overall", "bias_score_amb",
                      "bias_score_dis", "inconsistency"],
    TemplateScores: [*FOUR, "ooc_ratio", "label"],
    LabelTypeScores: ["data", "label_type", "answers", *FOUR],
    TukeyRow: ["a", "b", "mean_difference", "p_value", "ci_low", "ci_high", "significant"],
}  # fmt: skip


@pytest.mark.parametrize("model", list(KEY_ORDER), ids=lambda model: model.__name__)
def test_a_block_built_from_shared_bases_keeps_its_key_order(model):
    assert list(model.model_fields) == KEY_ORDER[model]


def test_answer_tallies_start_with_the_shared_totals():
    assert list(CBBQAnswerCounts.model_fields)[:3] == ["n_total", "n_ooc", "n_amb"]
    assert list(CBBQAnswerCounts(n_total=3, n_ooc=1).model_dump())[:2] == ["n_total", "n_ooc"]


def test_a_shared_metric_field_still_turns_nan_into_null():
    scores = TemplateScores(acc_amb=float("nan"), acc_dis=0.5, diff_bias_amb=None, diff_bias_dis=1, ooc_ratio=0)
    assert scores.model_dump_json().startswith('{"acc_amb":null,"acc_dis":0.5,"diff_bias_amb":null,"diff_bias_dis":1.0')


def test_bootstrap_intervals_says_what_is_resampled_and_when_it_is_null():
    with_breakdowns = bootstrap_intervals("over triplets", "a group's block resamples its own").description
    alone = bootstrap_intervals("over BEIs").description
    assert with_breakdowns == (
        "95% bootstrap intervals over triplets; a group's block resamples its own; null with "
        "run.bootstrap_resamples=0 (and in the breakdowns of summaries before schema 2.4)"
    )
    assert alone.endswith("over BEIs; null with run.bootstrap_resamples=0 (and in summaries before schema 2.4)")


def test_a_repeated_id_names_its_first_row():
    first_row: dict[str, int] = {}
    note_first_row(first_row, "s1", "sample_id", Path("samples.tsv"), 2)
    with pytest.raises(DataError, match=r"duplicate sample_id 's1' \(first at row 2\)") as raised:
        note_first_row(first_row, "s1", "sample_id", Path("samples.tsv"), 5)
    assert (raised.value.row, raised.value.field) == (5, "sample_id")


def test_errors_name_where_they_happened_in_order():
    assert str(DataError("bad", file="a.csv", row=0, field="x")) == "file a.csv, row 0, field 'x': bad"
    assert str(PolicyError("bad", file="p.toml", line=3, criterion="c")) == "file p.toml: line 3, criterion 'c': bad"
    assert str(DataError("bad")) == "bad"


def test_the_shared_status_marks_set_status_and_failure():
    store = MemoryResultStore()
    store.create_run(RunManifest(run_id="r", benchmark="kobbq", config={}, config_fingerprint="c", data_fingerprint="d"))
    marks = []
    for mark in (lambda: store.mark_failed("r", "boom"), lambda: store.mark_interrupted("r", "ctrl-c"), lambda: store.mark_running("r")):
        mark()
        run = store.get_run("r")
        assert run is not None
        marks.append((run.status, run.failure))
    assert marks == [("failed", "boom"), ("interrupted", "ctrl-c"), ("running", None)]
