"""The truth probe's measures on replies built by hand: aligned, one position late or early, values above the top choice."""

from __future__ import annotations

from culturebias.adapters.openai.alignment import measure
from culturebias.adapters.openai.boundaries import continuation_start

TEXTS = ["1", ",", " 2", ",", " 3", ",", " 4", ",", " 5", ",", " 6"]


def _tops(shift: int) -> list[dict[str, float] | None]:
    """The model's top choice at each position: the token ``shift`` positions on (0 = aligned), sure of it."""
    tops: list[dict[str, float] | None] = [None]
    for i in range(1, len(TEXTS)):
        j = min(max(i + shift, 0), len(TEXTS) - 1)
        tops.append({TEXTS[j]: -0.1})
    return tops


def test_aligned_top_choices_are_the_tokens_themselves():
    values = [None] + [-0.1] * (len(TEXTS) - 1)
    measured = measure(TEXTS, values, _tops(0))
    assert measured.shifted() is None
    assert measured.own == len(TEXTS) - 1 and measured.above_top == 0
    assert measured.mean_gap == 0.0


def test_top_choices_one_position_on_are_a_late_shift_and_one_back_an_early_one():
    values = [None] + [-12.0] * (len(TEXTS) - 1)
    late = measure(TEXTS, values, _tops(+1))
    assert late.shifted() == "late" and late.mean_gap > 10
    assert measure(TEXTS, values, _tops(-1)).shifted() == "early"


def test_a_model_that_guesses_nothing_is_no_evidence_of_a_shift():
    tops = [None] + [{"x": -5.0}] * (len(TEXTS) - 1)
    values = [None] + [-6.0] * (len(TEXTS) - 1)
    measured = measure(TEXTS, values, tops)
    assert measured.shifted() is None and measured.own == measured.next == 0


def test_a_value_above_its_positions_top_choice_is_counted():
    values = [None, -0.1, -0.01, -0.1, -0.01, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1]
    tops = [None] + [{"?": -0.05}] * (len(TEXTS) - 1)
    assert measure(TEXTS, values, tops).above_top == 2


def test_boundaries_from_token_ids():
    # the whole text begins with the context's ids: exact under both rules
    assert continuation_start([1, 5, 6], [1, 5, 6, 7, 8], "straddle-to-continuation") == (3, True)
    assert continuation_start([1, 5, 6], [1, 5, 6, 7, 8], "authors") == (3, True)
    # the context's last token merges with the continuation's first: the authors count stays exact,
    # the straddle rule falls back to the first differing id, flagged approximate
    assert continuation_start([1, 5, 6], [1, 5, 9, 8], "straddle-to-continuation") == (2, False)
    assert continuation_start([1, 5, 6], [1, 5, 9, 8], "authors") == (3, True)
    assert continuation_start([], [4, 5], "straddle-to-continuation") == (0, True)
