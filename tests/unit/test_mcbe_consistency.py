"""McBE's judge–human consistency rate (Table 13): the pure rate, its interval, and the checks of the human rows."""

from __future__ import annotations

import pytest

from culturebias.domain.errors import DataError
from culturebias.domain.mcbe.consistency import JudgedPair, consistency, human_winners, judge_winner
from culturebias.domain.uncertainty.score import wilson


def test_the_judges_pick_is_the_higher_ba_score_and_equal_scores_tie():
    assert (judge_winner(50.0, 40.0), judge_winner(40.0, 50.0), judge_winner(45.5, 45.5)) == ("a", "b", "tie")


def test_the_rate_is_the_share_of_pairs_whose_picks_agree_with_a_wilson_interval_and_per_category():
    pairs = [
        JudgedPair("gender:2", "gender", "a", 60.0, 20.0),  # agree
        JudgedPair("gender:3", "gender", "a", 10.0, 30.0),  # the judge picks b
        JudgedPair("region:2", "region", "tie", 40.0, 40.0),  # both tie
        JudgedPair("region:3", "region", "b", 40.0, 40.0),  # the judge ties, people picked b
        JudgedPair("region:4", "region", "a", None, 30.0),  # the judge scored a not: left out
    ]
    result = consistency(pairs)
    assert (result.n, result.agree, result.rate) == (4, 2, 0.5)
    assert (result.low, result.high) == pytest.approx(wilson(2, 4))
    assert result.unscored == ["region:4"] and (result.human_ties, result.judge_ties) == (1, 2)
    assert result.categories["gender"].rate == 0.5 and result.categories["region"].rate == 0.5
    assert result.categories["region"].n == 2


def test_no_scored_pair_gives_no_rate():
    result = consistency([JudgedPair("gender:2", "gender", "a", None, None)])
    assert (result.n, result.rate, result.low, result.high) == (0, None, None, None)


def test_human_rows_accept_a_b_tie_in_any_case_and_the_ba_item_id():
    rows = [(2, {"item": "gender:2|ba", "winner": "A"}), (3, {"item": " gender:3 ", "winner": "Tie", "note": "x"})]
    found = human_winners(rows, "h.csv")
    assert [(w.item, w.winner, w.row) for w in found] == [("gender:2", "a", 2), ("gender:3", "tie", 3)]


@pytest.mark.parametrize(
    "rows, row, field",
    [
        ([(2, {"item": "gender:2", "winner": "a"}), (3, {"item": "gender:2|ba", "winner": "b"})], 3, "item"),  # twice
        ([(2, {"item": "gender:2", "winner": "c"})], 2, "winner"),  # out of range
        ([(2, {"item": "gender:2", "winner": 1})], 2, "winner"),
        ([(2, {"item": "gender:2", "winner": "a"}), (4, {"winner": "a"})], 4, "item"),  # no item
    ],
)
def test_a_bad_human_row_is_a_data_error_naming_file_row_and_field(rows, row, field):
    with pytest.raises(DataError) as error:
        human_winners(rows, "humans.jsonl")
    assert (error.value.file, error.value.row, error.value.field) == ("humans.jsonl", row, field)
    assert f"humans.jsonl, row {row}, field '{field}'" in str(error.value)


def test_an_empty_file_is_a_data_error():
    with pytest.raises(DataError, match="no pairs"):
        human_winners([], "humans.jsonl")
