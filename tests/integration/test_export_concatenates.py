"""Separately written exports of all five benchmarks concatenate (issue 37 point 4): one documented column set
(docs/EXPORT_SCHEMA.md) whatever the benchmark, Parquet tables by ``pyarrow.concat_tables``, CSV files by header."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

import culturebias
from culturebias.domain.export_schema import EXPORT_SCHEMA_VERSION, ITEM_COLUMNS, RUN_COLUMNS, RunRecords, typed_rows
from culturebias.domain.audit import ItemRecord

sys.path.insert(0, str(Path(__file__).parent))
from test_audit_trail import RUNS, _Runs  # noqa: E402  (one scripted run per benchmark)

BENCHMARKS = ("twbias", "kobbq", "cbbq", "mcbe", "libra")


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    """Each benchmark's run exported on its own, as parquet, csv and jsonl."""
    assert set(RUNS) == set(BENCHMARKS)
    root = tmp_path_factory.mktemp("concat")
    runs = _Runs(root)
    outs = {}
    for benchmark in BENCHMARKS:
        _, out = runs[benchmark]
        for format in ("parquet", "csv", "jsonl"):
            assert culturebias.export_samples(out, root / f"{benchmark}.{format}", format) > 0
        outs[benchmark] = out
    return root, outs


def test_parquet_tables_of_all_five_benchmarks_written_one_by_one_concatenate(written, costly):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    root, outs = written
    tables = [pq.read_table(root / f"{b}.parquet") for b in BENCHMARKS]
    combined = pa.concat_tables(tables)  # no promotion: one schema
    assert all(t.schema == tables[0].schema for t in tables)
    assert combined.num_rows == sum(t.num_rows for t in tables)
    assert set(combined.column("benchmark").to_pylist()) == set(BENCHMARKS)
    assert combined.column_names[: len(RUN_COLUMNS) + len(ITEM_COLUMNS)] == [*RUN_COLUMNS, *ITEM_COLUMNS]
    assert combined.schema.field("scores").type == pa.map_(pa.string(), pa.float64())
    assert tables[0].schema.metadata[b"culturebias.export_schema"] == EXPORT_SCHEMA_VERSION.encode()
    # benchmark-specific fields stay typed, and are null in the other benchmarks' rows
    rows = combined.to_pylist()
    assert {r["meta.specification"] is not None for r in rows if r["benchmark"] == "twbias"} == {True}
    assert {r["meta.specification"] for r in rows if r["benchmark"] != "twbias"} == {None}
    twbias = next(r for r in rows if r["benchmark"] == "twbias")
    assert dict(twbias["scores"]).keys() == {"ppl_origin", "ppl_reference"}
    assert {r["meta.other"] for r in rows} == {None}  # every built-in field is declared
    # the same as one export of all five runs
    assert culturebias.export_samples(list(outs.values()), root / "all.parquet", "parquet") == combined.num_rows
    assert pq.read_table(root / "all.parquet").schema == combined.schema


def test_csv_files_of_all_five_benchmarks_share_one_header(written):
    root, _ = written
    headers, rows = set(), 0
    for benchmark in BENCHMARKS:
        with (root / f"{benchmark}.csv").open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            headers.add(tuple(reader.fieldnames or ()))
            rows += sum(1 for _ in reader)
    assert len(headers) == 1 and rows > 0
    jsonl = [json.loads(line) for b in BENCHMARKS for line in (root / f"{b}.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {tuple(line) for line in jsonl} == headers
    mcbe = next(line for line in jsonl if line["benchmark"] == "mcbe" and line["scores"])
    assert isinstance(mcbe["scores"], dict) and "score" in mcbe["scores"]


def test_metadata_no_benchmark_declares_goes_to_meta_other_and_scores_stay_typed():
    record = ItemRecord(benchmark="plug", item_id="q0", scores={"s": 2}, metadata={"colour": "red", "row": 3})
    columns, rows = typed_rows([RunRecords("r1", "plug", "m", "f", [record], {"row": "int64", "repeat": "int64"})])
    assert [c for c in columns if c.startswith("meta.")] == ["meta.other", "meta.repeat", "meta.row"]
    assert rows[0]["meta.other"] == '{"colour": "red"}' and rows[0]["meta.row"] == 3 and rows[0]["scores"] == {"s": 2.0}
    assert not any(c.startswith("score.") for c in columns)


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_every_benchmarks_items_make_a_valid_every_eval_ever_samples_file(written, benchmark, tmp_path):
    import jsonschema

    from culturebias.adapters.governance.every_eval_ever import write_every_eval_ever
    from culturebias.adapters.governance.every_eval_ever_samples import samples_schema
    from culturebias.bootstrap.governance import exported_run

    _, outs = written
    paths = write_every_eval_ever(exported_run(outs[benchmark]), tmp_path / "eee.json")  # validated before writing
    lines = [json.loads(line) for line in paths[1].read_text(encoding="utf-8").splitlines()]
    assert len(lines) == len(culturebias.samples(outs[benchmark])) > 0
    validator = jsonschema.Draft7Validator(samples_schema())
    assert all(validator.is_valid(line) for line in lines)
