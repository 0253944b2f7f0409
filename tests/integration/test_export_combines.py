"""Exported records combine: every row names its run and model, one Arrow type per column (docs/exports.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import culturebias
from culturebias.bootstrap.cli import main
from culturebias.bootstrap.registry import registry
from culturebias.domain.export_schema import RUN_COLUMNS, benchmark_schema, one_type_per_name


def declared(benchmark: str) -> dict[str, str]:
    return registry().benchmark(benchmark).export_meta_columns()

sys.path.insert(0, str(Path(__file__).parent))
from test_bbq_cli import kobbq_replay  # noqa: E402
from test_not_measured import echoing_replay  # noqa: E402

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory) -> tuple[Path, list[Path]]:
    """Two models (two answer files): one answers with the biased option, one echoes the context (every answer out
    of choice, so its chosen_index is null throughout: the column that was string in one run and int64 in another)."""
    root = tmp_path_factory.mktemp("runs")
    biased = kobbq_replay(root / "model-a.jsonl", limit=4)
    echo = echoing_replay(root / "model-b.jsonl")
    runs = []
    for name, answers, limit in (("a1", biased, 4), ("a2", biased, 2), ("b1", echo, 4)):
        culturebias.evaluate("kobbq", model={"backend": "replay", "path": str(answers)},
                             options={"prompts": "1,2", "limit": limit}, out=root / name)  # fmt: skip
        runs.append(root / name)
    return root, runs


def test_three_runs_of_two_models_concatenate_and_export_as_one_table(three_runs):
    root, runs = three_runs
    tables = []
    for run in runs:
        assert culturebias.export_samples(run, root / f"{run.name}.parquet", "parquet") > 0
        tables.append(pq.read_table(root / f"{run.name}.parquet"))
    combined = pa.concat_tables(tables)  # one schema: no promotion, no retyping
    assert combined.schema == tables[0].schema == tables[2].schema
    assert combined.schema.field("meta.chosen_index").type == pa.int64()
    assert combined.schema.field("texts").type == pa.list_(pa.string())
    assert combined.schema.field("meta.options").type == pa.list_(pa.string())
    assert combined.schema.field("meta.shown_order").type == pa.list_(pa.int64())
    assert set(combined.column("meta.chosen_index").to_pylist()[-24:]) == {None}  # the echoing model never chose

    n = culturebias.export_samples(runs, root / "all.parquet", "parquet")
    table = pq.read_table(root / "all.parquet")
    assert n == table.num_rows == combined.num_rows == 24 + 12 + 24
    assert table.schema == combined.schema
    ids = {culturebias.load_summary(run).run_id for run in runs}
    assert set(table.column("run_id").to_pylist()) == ids and set(table.column("benchmark").to_pylist()) == {"kobbq"}
    models = dict(zip(table.column("run_id").to_pylist(), zip(table.column("model").to_pylist(), table.column("model_fingerprint").to_pylist())))
    assert len(set(models.values())) == 2  # two models: a1 and a2 share one name and fingerprint
    assert all(name and len(fingerprint) == 16 for name, fingerprint in models.values())


def test_the_cli_exports_several_runs_into_one_table(three_runs, capsys):
    root, runs = three_runs
    assert main(["export", *map(str, runs), "--format", "jsonl", "--out", str(root / "all.jsonl")]) == 0
    assert "of 3 run(s)" in capsys.readouterr().out
    lines = [json.loads(line) for line in (root / "all.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len({line["run_id"] for line in lines}) == 3 and all(line["model"] for line in lines)
    assert isinstance(lines[0]["texts"], list) and isinstance(lines[0]["meta.options"], list)  # lists, not JSON text


def test_runs_of_two_benchmarks_make_one_table_with_one_type_per_column(three_runs, tmp_path):
    from culturebias.adapters.cbbq.files import CBBQFiles
    from culturebias.domain.bbq.answer_order import shown_order

    root, runs = three_runs
    items = [i for i in CBBQFiles(None).load().items if i.category == "gender"]
    answers = tmp_path / "cbbq.jsonl"
    with answers.open("w", encoding="utf-8") as handle:
        for item in items:
            letter = "ABC"[shown_order(3, 0).index(item.unknown_index)]
            handle.write(json.dumps({"sample_id": item.sample_id, "prompt_id": "q", "permutation": 0, "raw": letter}) + "\n")
    cbbq = tmp_path / "cbbq"
    culturebias.evaluate("cbbq", model={"backend": "replay", "path": str(answers)}, out=cbbq,
                         options={"categories": "gender", "limit": 3, "permutations": "0"})  # fmt: skip
    assert culturebias.export_samples([runs[0], cbbq], tmp_path / "two.parquet", "parquet") > 0
    table = pq.read_table(tmp_path / "two.parquet")
    assert set(table.column("benchmark").to_pylist()) == {"kobbq", "cbbq"}
    for benchmark in ("kobbq", "cbbq"):
        for name in benchmark_schema(declared(benchmark)):
            assert name in table.column_names  # every declared column of both benchmarks, typed as declared
    assert pq.read_table(root / "a1.parquet").schema == pq.read_table(root / "all.parquet").schema
    for name, kind in benchmark_schema(declared("kobbq")).items():  # a kobbq-only export has the kobbq columns, with the same types
        assert table.schema.field(name).type == pq.read_table(root / "a1.parquet").schema.field(name).type, (name, kind)
    assert declared("kobbq") == declared("cbbq")


def test_a_value_that_cannot_take_its_column_type_names_the_run_item_and_column():
    from culturebias.domain.errors import DataError
    from culturebias.domain.export_schema import coerce

    assert coerce("3", "int64", "x") == 3 and coerce(2.0, "int64", "x") == 2 and coerce('["a", "b"]', "list<string>", "x") == ["a", "b"]
    assert coerce(7, "string", "x") == "7" and coerce(float("nan"), "float64", "x") is None
    with pytest.raises(DataError, match="run r1, item i9, column meta.row"):
        coerce("many", "int64", "run r1, item i9, column meta.row")


def test_the_documented_schema_is_the_declared_one():
    from culturebias.domain.export_schema import schema_markdown

    doc = Path(__file__).resolve().parents[2] / "docs" / "EXPORT_SCHEMA.md"
    built_ins = {name: declared(name) for name in ("twbias", "kobbq", "cbbq", "mcbe", "libra")}
    assert doc.read_text(encoding="utf-8") == schema_markdown(built_ins)


def test_every_registered_benchmark_declares_one_type_per_metadata_column():
    one_type_per_name({name: declared(name) for name in registry().benchmarks.names()})
    with pytest.raises(ValueError, match="meta.row is int64 in a and string in b"):
        one_type_per_name({"a": {"row": "int64"}, "b": {"row": "string"}})
