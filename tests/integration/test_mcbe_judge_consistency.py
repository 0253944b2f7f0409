"""``culturebias judge-consistency`` (issue 36.5): McBE's Table 13 rate from the shipped example file of human
winners and the judge's BA scores of two stored runs; a bad row is a typed error and nothing is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import culturebias.bootstrap.api as api
from culturebias.adapters.judging.judge import GeneratorJudge
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.bootstrap.cli import main
from culturebias.domain.errors import DataError
from culturebias.domain.mcbe.instances import BEI, McBEDataset
from culturebias.domain.uncertainty.score import wilson
from culturebias.testing.context import run_with_fakes
from culturebias.testing.scripted import ScriptedGenerator

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "mcbe_human_winners"
BEIS = tuple(
    BEI(category, "背景。", sentence, ("甲", "乙"), "能力", "解释。", 5.0, f"{category}.xlsx", row)
    for category, sentence, row in (
        ("gender", "[PLH]很能干。", 2), ("gender", "[PLH]在做饭。", 3), ("region", "[PLH]很勤快。", 2), ("region", "[PLH]爱吃辣。", 3),
    )
)
# The judge's mark (every criterion) of each run's analysis of each BEI: the judge picks
# gender:2 a, gender:3 b, region:2 tie, region:3 b; the example file's people pick a, a, tie, b.
MARKS = {"a": (8, 2, 5, 6), "b": (3, 7, 5, 9)}


def _run(base: Path, side: str) -> Path:
    out = base / side
    out.mkdir(parents=True)
    answers = {bei.default_sentence: f"{side}答：{bei.default_sentence}" for bei in BEIS}
    marks = {answers[bei.default_sentence]: mark for bei, mark in zip(BEIS, MARKS[side])}

    def model(request, prompt: str) -> str:
        text = request.messages[0].content
        return next((answer for sentence, answer in answers.items() if sentence in text), "无")

    def judge(request, prompt: str) -> str:
        text = request.messages[0].content
        return str(next(mark for answer, mark in marks.items() if answer in text))

    store = SQLiteResultStore(out / "results.sqlite")
    try:
        run_with_fakes(
            "mcbe", options={"tasks": "ba"}, dataset=McBEDataset(BEIS), out_dir=out, store=store, report=False,
            generator=ScriptedGenerator(model, name=f"model-{side}"),
            judge=GeneratorJudge(ScriptedGenerator(judge, name="judge"), max_retries=1),
        )
    finally:
        store.close()
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("consistency")
    return _run(base, "a"), _run(base, "b")


@pytest.mark.parametrize("example", ["example.jsonl", "example.csv"])
def test_the_rate_of_the_shipped_example_is_the_share_of_pairs_the_judge_orders_as_people_did(runs, example):
    result = api.judge_consistency(runs[0], runs[1], EXAMPLES / example)
    assert (result.n, result.agree, result.rate) == (4, 3, 0.75)
    assert (result.low, result.high) == pytest.approx(wilson(3, 4))
    assert result.categories["gender"].agree == 1 and result.categories["region"].agree == 2
    assert (result.human_ties, result.judge_ties, result.unscored) == (1, 1, [])
    assert result.run_a != result.run_b and result.human_file == str(EXAMPLES / example)


def test_the_command_prints_the_rate_and_writes_json_on_request(runs, tmp_path, capsys):
    out = tmp_path / "consistency.json"
    code = main(["judge-consistency", str(runs[0]), str(runs[1]), "--human", str(EXAMPLES / "example.jsonl"), "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and "overall: 75.0% (3 of 4; 95% Wilson" in printed and "  gender: 50.0% (1 of 2" in printed
    assert json.loads(out.read_text(encoding="utf-8"))["rate"] == 0.75


@pytest.mark.parametrize(
    "line, row, field",
    [
        ('{"item": "gender:9", "winner": "a"}', 3, "item"),  # no such BEI in the runs
        ('{"item": "gender:2", "winner": "b"}', 3, "item"),  # named twice
        ('{"item": "region:2", "winner": "2"}', 3, "winner"),  # out of range
    ],
)
def test_a_bad_row_is_a_typed_error_naming_file_row_and_field_and_nothing_is_written(runs, tmp_path, capsys, line, row, field):
    human = tmp_path / "humans.jsonl"
    human.write_text('{"item": "gender:2", "winner": "a"}\n{"item": "gender:3", "winner": "a"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(DataError) as error:
        api.judge_consistency(runs[0], runs[1], human)
    assert (error.value.file, error.value.row, error.value.field) == (str(human), row, field)
    out = tmp_path / "consistency.json"
    code = main(["judge-consistency", str(runs[0]), str(runs[1]), "--human", str(human), "--out", str(out)])
    assert code == 3 and not out.exists()
    assert f"{human}, row {row}, field '{field}'" in capsys.readouterr().err


def test_a_human_file_of_another_kind_or_a_row_with_more_cells_than_the_header_is_a_data_error(runs, tmp_path):
    other = tmp_path / "humans.txt"
    shutil.copy(EXAMPLES / "example.csv", other)
    with pytest.raises(DataError, match=r"\.jsonl or \.csv"):
        api.judge_consistency(runs[0], runs[1], other)
    broken = tmp_path / "humans.csv"
    broken.write_text("item,winner\ngender:2,a,extra\n", encoding="utf-8")
    with pytest.raises(DataError, match="row 2"):
        api.judge_consistency(runs[0], runs[1], broken)
