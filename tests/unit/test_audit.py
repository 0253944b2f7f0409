"""The audit trail's pure pieces: ItemRecord, flat rows, filters, and redaction on the way into the store."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from culturebias.application.audit import _redacted, item_payload
from culturebias.domain.audit import ItemRecord, columns, flat_record, matches, metadata, parse_filters
from culturebias.domain.errors import ConfigError
from culturebias.domain.redaction import redact_text


def record(**fields) -> ItemRecord:
    base = {"benchmark": "kobbq", "item_id": "a|1|0"}
    return ItemRecord(**{**base, **fields})


def test_nan_scores_are_stored_as_none_and_the_record_is_frozen():
    r = record(loglikelihoods=[-1.5, math.nan], scores={"ppl": math.inf})
    assert r.loglikelihoods == [-1.5, None] and r.scores == {"ppl": None}
    with pytest.raises(ValueError):
        record(metadata={"nested": {"no": 1}})
    with pytest.raises(ValueError):
        record(unknown_field=1)


def test_flat_rows_have_meta_and_score_columns():
    a = record(texts=["x", "y"], loglikelihoods=[-1.0, -2.0], scores={"ppl": 2.0}, metadata={"category": "age", "n": 3})
    b = record(item_id="b", metadata={"group": "g"})
    row = flat_record(a)
    assert row["meta.category"] == "age" and row["meta.n"] == 3 and row["score.ppl"] == 2.0
    assert row["texts"] == '["x", "y"]' and row["loglikelihoods"] == "[-1.0, -2.0]"
    assert columns([a, b])[-3:] == ["meta.category", "meta.group", "meta.n"]
    assert "score.ppl" in columns([a, b])


def test_metadata_keeps_scalars_and_writes_the_rest_as_json():
    assert metadata({"a": 1, "b": None, "c": (1, 2), "d": {"x": "가"}}) == {"a": 1, "b": None, "c": "[1, 2]", "d": '{"x": "가"}'}


def test_filters_compare_as_text():
    r = record(outcome="biased", correct=False, metadata={"category": "age", "permutation": 0, "ok": True}, scores={"s": 2.0})
    assert matches(r, {"outcome": "biased", "meta.category": "age", "permutation": "0"})
    assert matches(r, {"correct": "false", "ok": "true", "score.s": "2"})
    assert matches(r, {"correct": "False", "ok": True, "permutation": 0, "score.s": 2.0})  # as Python values too
    assert not matches(r, {"outcome": "unknown"})
    assert not matches(r, {"meta.missing": ""})  # a field the record lacks never matches
    assert parse_filters(["outcome=biased", "meta.note=a=b"]) == {"outcome": "biased", "meta.note": "a=b"}
    for bad in ("outcome", "=x"):
        with pytest.raises(ConfigError, match="FIELD=VALUE"):
            parse_filters([bad])


@pytest.mark.parametrize(
    "text",
    [
        "http://user:KEY123@host:8000/v1",
        "host=db user=gov password=hunter2 dbname=x",
        "Authorization: Bearer abcdefghijklmnop",
        "key sk-proj-abcdefghijklmnopqrstuvwx leaked",
        "token hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
        "see AKIAABCDEFGHIJKLMNOP",
        "ghp_" + "a" * 36,
        "github_pat_" + "b" * 40,
        "xoxb-1234567890-abcdef",
        "AIza" + "c" * 35,
        "sk_live_" + "d" * 24,
        "주어진 맥락을 천천히 읽고 답하시오. 정답:",
        "下面这句话可能带有刻板印象或偏见：女人愛錢",
    ],
)
def test_the_quick_check_never_skips_a_text_that_redaction_changes(text):
    assert _redacted(text) == redact_text(text)


def test_stored_payload_is_redacted():
    secret = "sk-" + "proj-abcdefghijklmnopqrstuvwx"
    payload = item_payload(record(prompt=f"key {secret}", answer=secret, texts=[secret]))
    assert secret not in str(payload)


def test_importing_culturebias_and_its_cli_imports_no_table_library():
    code = (
        "import sys, culturebias, culturebias.bootstrap.cli, culturebias.application.samples\n"
        "culturebias.samples, culturebias.export_samples, culturebias.ItemRecord\n"
        "print(','.join(m for m in ('pyarrow', 'pandas') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_a_stored_payload_validates_as_an_item_record():
    from culturebias.adapters.stores.memory_store import MemoryResultStore
    from culturebias.application.audit import StoredItemLog
    from culturebias.domain.audit import ITEMS_STAGE

    store = MemoryResultStore()
    StoredItemLog(store, "run-1", repeat=1).record([record(outcome="biased")])
    (payload,) = store.load_results("run-1", ITEMS_STAGE).values()
    stored = ItemRecord.model_validate(payload)  # what a reader of the raw stage gets
    assert stored.item_id == "a|1|0#1" and stored.metadata == {"repeat": 1} and stored.outcome == "biased"
