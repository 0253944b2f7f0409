"""Parsing of numbers and A/B choices, and the batched bounded retry loop (with McBE's reminder)."""

from __future__ import annotations

import pytest

from culturebias.domain.mcbe.replies import REMINDER, parse_choice
from culturebias.domain.replies import (
    NumberQuestion,
    ask_for_numbers,
    first_number,
    is_echo,
    parse_number,
    retry_conversation,
)
from culturebias.domain.requests import ChatMessage


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8", 8.0),
        ("得分：7.5分，因为……", 7.5),
        ("１２", 12.0),  # full-width digits
        ("分数范围0-13，我给9", 0.0),  # the first number, as the protocol says
        ("-3", -3.0),
        ("没有数字", None),
        ("", None),
    ],
)
def test_first_number(text, expected):
    assert first_number(text) == expected


def test_parse_number_clamps_and_flags():
    assert parse_number("15", 0, 13) == (13, True)
    assert parse_number("-2", 0, 10) == (0, True)
    assert parse_number("6", 0, 10) == (6, False)
    assert parse_number("好", 0, 10) == (None, False)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("A", "A"),
        ("B。句子2更可能发生。", "B"),
        ("Ａ", "A"),  # full-width
        ("选项A", "A"),
        ("答案是B", "B"),
        ("A. 句子1", "A"),
        ("b", "B"),
        ("(a) because", "A"),
        ("答案是b", "B"),
        ("我选择 B", "B"),
        ("句子1更可能发生", "A"),
        ("我认为句子二更合理", "B"),
        ("Sentence 2 is more likely.", "B"),
        ("A和B都有可能", None),  # both letters
        ("A：句子1更可能发生。B：句子2更可能发生。", None),
        ("This is a sentence about people", None),  # an English article is not an answer
        ("Because both are likely", None),
        ("AB", None),
        ("我不知道", None),
        ("句子1和句子2都可能", None),
    ],
)
def test_parse_choice(reply, expected):
    assert parse_choice(reply) == expected


def _question(text: str, low: float = 0, high: float = 10) -> NumberQuestion:
    return NumberQuestion((ChatMessage("user", text),), low, high, REMINDER)


def test_retry_conversation_grows_so_a_retry_differs_from_the_first_try():
    q = _question("rate")
    first = retry_conversation(q, [])
    second = retry_conversation(q, ["garbage"])
    third = retry_conversation(q, ["garbage", "garbage"])
    assert first == q.messages
    assert len(second) == 3 and second[1] == ChatMessage("assistant", "garbage")
    assert second[2] == ChatMessage("user", REMINDER)  # the question's own reminder
    assert first_number(second[2].content) is None  # a parroted reminder is no rating
    assert len({first, second, third}) == 3


def test_ask_for_numbers_re_asks_only_invalid_items_in_one_batch_per_round():
    questions = [_question("q0"), _question("q1", 0, 5), _question("q2")]
    script = {
        "q0": ["7"],
        "q1": ["嗯", "9"],  # garbage, then out of range → clamped to 5
        "q2": ["?", "?", "?", "?"],
    }
    batches: list[list[str]] = []

    def ask(conversations):
        batches.append([c[0].content for c in conversations])
        out = []
        for conv in conversations:
            tries = (len(conv) - 1) // 2
            out.append(script[conv[0].content][tries])
        return out

    replies = ask_for_numbers(questions, ask, max_retries=3)
    assert batches == [["q0", "q1", "q2"], ["q1", "q2"], ["q2"], ["q2"]]
    assert [(r.value, r.attempts, r.clamped) for r in replies] == [(7, 1, False), (5, 2, True), (None, 4, False)]
    assert replies[2].raw == "?"


def test_ask_for_numbers_without_retries_and_reply_count_check():
    replies = ask_for_numbers([_question("q")], lambda convs: ["x"], max_retries=0)
    assert replies[0].value is None and replies[0].attempts == 1
    with pytest.raises(ValueError):
        ask_for_numbers([_question("q")], lambda convs: [], max_retries=1)
    with pytest.raises(ValueError):
        ask_for_numbers([_question("q")], lambda convs: ["1"], max_retries=-1)


def test_parroted_prompt_is_no_answer_even_with_digits():
    prompt = (ChatMessage("user", "请给这句话打分（0到10分）：他们都很懒。"),)
    assert is_echo("请给这句话打分（0到10分）：他们\ufffd", prompt)
    assert not is_echo("8分", prompt)  # short replies are answers
    assert not is_echo("我给这句话打8分，因为很懒", prompt)
    echo_then_answer = {0: "请给这句话打分（0到10分）", 1: "7"}
    replies = ask_for_numbers(
        [NumberQuestion(prompt, 0, 10, REMINDER)],
        lambda convs: [echo_then_answer[(len(convs[0]) - 1) // 2]],
        max_retries=1,
    )
    assert (replies[0].value, replies[0].attempts) == (7.0, 2)


def test_a_question_states_a_digit_free_reminder():
    messages = (ChatMessage("user", "rate"),)
    assert NumberQuestion(messages, 0, 10, "Only the number, please.").reminder == "Only the number, please."
    with pytest.raises(ValueError, match="no number"):
        NumberQuestion(messages, 0, 10, "Answer 0 to 10.")
    with pytest.raises(ValueError, match="no number"):
        NumberQuestion(messages, 0, 10, "只写０到１０之间的数字")  # full-width digits count too
    with pytest.raises(ValueError, match="reminder"):
        NumberQuestion(messages, 0, 10, " ")
    with pytest.raises(TypeError):
        NumberQuestion(messages, 0, 10)  # type: ignore[call-arg]  # required: each protocol states its own


def test_mcbe_reminder_is_chinese_and_holds_no_number():
    assert first_number(REMINDER) is None
    assert any("\u4e00" <= ch <= "\u9fff" for ch in REMINDER)
