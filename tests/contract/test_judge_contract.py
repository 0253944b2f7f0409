"""Contract of the Judge port, checked on GeneratorJudge over scripted generators.

A judge returns, per request and in request order, the first number of the reply
clamped to [low, high], or None after 1 + max_retries failed asks; retries are
batched (only the invalid requests, one generator call per round) and each retry
differs from the previous ask by the previous reply and the request's reminder,
which each protocol states in its own language.
"""

from __future__ import annotations

import pytest

from culturebias.adapters.judging.judge import GeneratorJudge
from culturebias.testing.scripted import ScriptedGenerator
from culturebias.application.libra.knowledge import judge_request
from culturebias.application.mcbe.analysis import bias_analysis
from culturebias.domain.libra.judging import JUDGE_REMINDER
from culturebias.domain.libra.knowledge import LocalTermOccurrences
from culturebias.domain.libra.options import LibraOptions
from culturebias.domain.libra.triplets import GlossaryEntry
from culturebias.domain.mcbe.instances import BEI
from culturebias.domain.mcbe.options import McBEOptions
from culturebias.domain.mcbe.replies import REMINDER as MCBE_REMINDER
from culturebias.domain.replies import first_number
from culturebias.domain.requests import ChatMessage
from culturebias.ports.judging import Judge, JudgeRequest
from culturebias.testing.context import fake_context

REMINDER = "Just the number."


def _request(text: str, low: float = 0, high: float = 13) -> JudgeRequest:
    return JudgeRequest(messages=(ChatMessage("user", text),), low=low, high=high, reminder=REMINDER)


def _attempt(prompt_messages) -> int:
    # every retry appends an assistant turn and a reminder
    return 1 + sum(1 for m in prompt_messages if m.role == "assistant")


class CountingGenerator(ScriptedGenerator):
    def __init__(self, rule):
        super().__init__(rule, name="judge-double")
        self.calls: list[list[tuple[ChatMessage, ...]]] = []

    def generate(self, requests, progress=None):
        self.calls.append([r.messages for r in requests])
        return super().generate(requests, progress)


def test_generator_judge_is_a_judge():
    assert isinstance(GeneratorJudge(ScriptedGenerator(lambda r, p: "1")), Judge)


def test_valid_reply_is_returned_as_a_number():
    judge = GeneratorJudge(ScriptedGenerator(lambda r, p: "9分"))
    [verdict] = judge.judge([_request("score it")])
    assert (verdict.value, verdict.raw, verdict.attempts) == (9.0, "9分", 1)


def test_out_of_range_reply_is_clamped():
    judge = GeneratorJudge(ScriptedGenerator(lambda r, p: "评分：27"))
    high, low = judge.judge([_request("a", 0, 13), _request("b", 30, 40)])
    assert high.value == 13.0 and low.value == 30.0
    assert high.attempts == 1


def test_garbage_then_valid_on_retry():
    replies = {1: "我觉得很好", 2: "7"}
    generator = CountingGenerator(lambda r, p: replies[_attempt(r.messages)])
    [verdict] = GeneratorJudge(generator, max_retries=3).judge([_request("score")])
    assert (verdict.value, verdict.attempts, verdict.raw) == (7.0, 2, "7")
    first, second = generator.calls[0][0], generator.calls[1][0]
    assert first != second  # the retry is a different request
    assert second[: len(first)] == first and second[len(first)].content == "我觉得很好"
    assert second[len(first) + 1] == ChatMessage("user", REMINDER)  # the request's own reminder


def test_always_garbage_gives_none_after_max_retries():
    generator = CountingGenerator(lambda r, p: "no number")
    [verdict] = GeneratorJudge(generator, max_retries=2).judge([_request("score")])
    assert verdict.value is None
    assert verdict.attempts == 3  # the first ask and two retries
    assert verdict.raw == "no number"
    assert len(generator.calls) == 3


def test_batch_order_kept_and_retries_batched():
    def rule(request, prompt):
        text = request.messages[0].content
        attempt = _attempt(request.messages)
        if text == "bad-once" and attempt == 1:
            return "?"
        if text == "never":
            return "?"
        return {"a": "1", "b": "12", "c": "3", "bad-once": "4"}[text]

    generator = CountingGenerator(rule)
    judge = GeneratorJudge(generator, max_retries=1)
    verdicts = judge.judge([_request(t) for t in ("a", "bad-once", "b", "never", "c")])
    assert [v.value for v in verdicts] == [1.0, 4.0, 12.0, None, 3.0]
    assert [v.attempts for v in verdicts] == [1, 2, 1, 2, 1]
    # one generator call per round; round 2 re-asks only the two invalid requests, in order
    assert [len(call) for call in generator.calls] == [5, 2]
    assert [call[0].content for call in generator.calls[1]] == ["bad-once", "never"]
    assert judge.batches == [5, 2]


def test_no_requests_no_calls_and_bad_retry_count():
    generator = CountingGenerator(lambda r, p: "1")
    assert GeneratorJudge(generator).judge([]) == []
    assert generator.calls == []
    with pytest.raises(ValueError):
        GeneratorJudge(generator, max_retries=-1)


def test_identity_is_the_generator_identity():
    generator = ScriptedGenerator(lambda r, p: "1", name="tiny-judge")
    assert GeneratorJudge(generator).identity.model == "tiny-judge"


def _reminders_of_retries(generator: CountingGenerator) -> set[str]:
    return {messages[-1].content for call in generator.calls[1:] for messages in call}


def test_libra_judge_retries_with_its_english_reminder():
    term = LocalTermOccurrences("kai", None, "kai", "We had kai at the marae.", ("t1",))
    entry = GlossaryEntry("kai", "food")
    request = judge_request(LibraOptions(comparison="judge"), term, entry, "a meal")
    assert request.reminder == JUDGE_REMINDER
    assert first_number(JUDGE_REMINDER) is None and JUDGE_REMINDER.isascii()
    generator = CountingGenerator(lambda r, p: "I think so" if _attempt(r.messages) == 1 else "1")
    [verdict] = GeneratorJudge(generator, max_retries=1).judge([request])
    assert (verdict.value, verdict.attempts) == (1.0, 2)
    assert _reminders_of_retries(generator) == {JUDGE_REMINDER}


def test_mcbe_judge_retries_with_its_chinese_reminder():
    bei = BEI("gender", "背景。", "[PLH]很能干。", ("甲", "乙"), "能力", "解释", 6.0, "gender.xlsx", 2)
    judge_generator = CountingGenerator(lambda r, p: "很好" if _attempt(r.messages) == 1 else "3")
    ctx = fake_context(
        generator=ScriptedGenerator(lambda r, p: "分析。"), judge=GeneratorJudge(judge_generator, max_retries=1)
    )
    outcome = bias_analysis(ctx, [bei], McBEOptions.model_validate({"tasks": "ba"}))
    assert outcome.counts["ba_judge_retried"] == 4
    assert _reminders_of_retries(judge_generator) == {MCBE_REMINDER}
    assert MCBE_REMINDER != JUDGE_REMINDER
