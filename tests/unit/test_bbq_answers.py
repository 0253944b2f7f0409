"""Generated replies → displayed option (PROTOCOLS §2, generate mode)."""

from __future__ import annotations

import pytest

from culturebias.domain.bbq.answers import parse_choice

KO_LETTERS = ("A", "B", "C")
KO_OPTIONS = ("손자", "할머니", "알 수 없음")
ZH_OPTIONS = ("男生", "女生", "没有足够信息")


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("B", 1),
        ("  b  ", 1),
        ("(C)", 2),
        ("A.", 0),
        ("**A**", 0),
        ("B\n\n설명: 할머니가 어려움을 겪었습니다.", 1),
        ("할머니", 1),
        ("알 수 없음.", 2),
        ("B: 할머니", 1),
        ("(B) 할머니", 1),
        ("C. 알 수 없음", 2),
        ("정답은 B입니다.", 1),
        ("정답: C", 2),
        ("답은 할머니입니다", 1),
        ("The answer is A.", 0),
        ("B입니다", 1),
    ],
)
def test_korean_replies_map_to_the_option_they_name(reply, expected):
    assert parse_choice(reply, KO_LETTERS, KO_OPTIONS) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   ",
        "D",
        "A, B",
        "A: 할머니",  # letter and text disagree
        "손자와 할머니 둘 다",
        "잘 모르겠습니다",
        "정답은 A입니다. 아니, 정답은 B입니다.",  # two answer expressions that disagree
        "AB",
    ],
)
def test_replies_naming_no_single_option_are_out_of_choice(reply):
    assert parse_choice(reply, KO_LETTERS, KO_OPTIONS) is None


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("答案是B", 1),
        ("答案：A。", 0),
        ("答案是C，因为材料没有说明。", 2),
        ("女生", 1),
        ("B. 女生", 1),
        ("我选择A", 0),
        ("没有足够信息", 2),
    ],
)
def test_chinese_replies(reply, expected):
    assert parse_choice(reply, ("A", "B", "C"), ZH_OPTIONS) == expected


def test_lowercase_prompt_letters_accept_either_case():
    letters = ("a", "b", "c")
    assert parse_choice("b", letters, KO_OPTIONS) == 1
    assert parse_choice("B", letters, KO_OPTIONS) == 1
    assert parse_choice("c: 알 수 없음", letters, KO_OPTIONS) == 2


def test_positions_follow_the_displayed_order_not_the_dataset_order():
    shown = ("알 수 없음", "손자", "할머니")  # a permutation of KO_OPTIONS
    assert parse_choice("할머니", KO_LETTERS, shown) == 2
    assert parse_choice("A", KO_LETTERS, shown) == 0


def test_a_letter_per_option_is_required():
    with pytest.raises(ValueError):
        parse_choice("A", ("A", "B"), KO_OPTIONS)
