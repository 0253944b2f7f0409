"""Contract of the Judge port, checked on GeneratorJudge over scripted generators.

A judge returns, per request and in request order, the first number of the reply
clamped to [low, high], or None after 1 + max_retries failed asks; retries are
batched (only the invalid requests, one generator call per round) and each retry
differs from the previous ask.
"""

from __future__ import annotations

import pytest

from culturebias.adapters.judge import GeneratorJudge
from culturebias.adapters.scripted.backend import ScriptedGenerator
from culturebias.domain.requests import ChatMessage
from culturebias.ports.judging import Judge, JudgeRequest


def _request(text: str, low: float = 0, high: float = 13) -> JudgeRequest:
    return JudgeRequest(messages=(ChatMessage("user", text),), low=low, high=high)


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
