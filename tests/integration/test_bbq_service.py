"""The BBQ services through run_benchmark on scripted ports: chat rendering, resume, aggregation."""

from __future__ import annotations

from pathlib import Path

import pytest

from culturebias.adapters.kobbq.files import KoBBQFiles
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer, ScriptedTemplater
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.domain.bbq.answer_order import shown_order
from culturebias.domain.bbq.keys import AnswerKey
from culturebias.domain.kobbq.summary import KoBBQSummary
from culturebias.testing.context import run_with_fakes

LIMIT = 16


class Harness:
    """KoBBQ runs through the orchestrator on one SQLite store, with a chat templater and the given ports."""

    def __init__(self, tmp_path: Path, generator=None, scorer=None):
        self.tmp_path = tmp_path
        self.store = SQLiteResultStore(tmp_path / "results.sqlite")
        self.generator, self.scorer = generator, scorer
        self.templater = ScriptedTemplater()
        self.dataset = KoBBQFiles(None).load()

    def run(self, options: dict, resume: bool = False) -> KoBBQSummary:
        result = run_with_fakes(
            "kobbq",
            options=options,
            dataset=self.dataset,
            out_dir=self.tmp_path / "out",
            report=False,
            store=self.store,
            resume=resume,
            scorer=self.scorer,
            generator=self.generator,
            templater=self.templater,
        )
        assert isinstance(result.summary, KoBBQSummary)
        return result.summary


def biased_replies(items):
    requests = []

    def reply(request, rendered: str) -> str:
        requests.append((request, rendered))
        key = AnswerKey.decode(request.key)
        item = items[key.sample_id]
        return "ABC"[shown_order(3, key.permutation).index(item.biased_index)]

    return reply, requests


def test_generate_mode_sends_chat_messages_and_a_resumed_run_generates_nothing(tmp_path):
    items = {i.sample_id: i for i in KoBBQFiles(None).load().items}
    reply, seen = biased_replies(items)
    harness = Harness(tmp_path, generator=ScriptedGenerator(reply))
    settings = {"mode": "generate", "prompts": "1", "limit": LIMIT, "statistics": False}
    first = harness.run(settings)
    assert first.metrics.chat_template is True
    assert len(seen) == LIMIT * 3
    request, rendered = seen[0]
    assert request.prompt is None and request.messages[0].role == "user" and len(request.messages) == 1
    assert rendered.startswith("<s><|user|>주어진 맥락을") and rendered.endswith("정답:<|end|><|assistant|>")
    # the run finished, so a new run with the same config starts afresh; an unfinished one would resume:
    harness.store.mark_failed(first.run_id, "pretend it was killed")
    seen.clear()
    resumed = harness.run(settings, resume=True)
    assert resumed.run_id == first.run_id and seen == []
    assert resumed.metrics.overall == first.metrics.overall


def test_likelihood_mode_scores_bare_letters_after_the_rendered_chat_prompt(tmp_path):
    contexts = []

    def rule(context: str, continuation: str) -> float:
        contexts.append((context, continuation))
        return {"A": -1.0, "B": -2.0, "C": -3.0}[continuation]

    harness = Harness(tmp_path, scorer=ScriptedScorer(rule))
    summary = harness.run({"mode": "likelihood", "prompts": "5", "permutations": "0", "limit": 4, "statistics": False})
    assert summary.metrics.mode == "likelihood"
    assert sorted({c for _, c in contexts}) == ["A", "B", "C"]
    assert all(ctx.endswith("답:<|end|><|assistant|>") and "보기:(A) " in ctx for ctx, _ in contexts)
    # always "A" = dataset option 0 under permutation 0: the biased-question answer of the template
    assert summary.details.predictions is not None
    assert summary.details.predictions[0] == "age-001a-002-amb-bsd|5|0|0|counter_biased"


def test_per_template_aggregation_differs_from_pooling(tmp_path):
    items = {i.sample_id: i for i in KoBBQFiles(None).load().items}
    # 24 items = age-001, -002, -003, versions a and b, 4 questions each. Replies: age-001 and
    # age-002a out of choice, age-002b biased, age-003 unknown.
    lost = {s for s in items if s.startswith(("age-001", "age-002a"))}

    def reply(request, rendered):
        key = AnswerKey.decode(request.key)
        item = items[key.sample_id]
        if key.sample_id in lost:
            return "모르겠어요"
        choice = item.biased_index if key.sample_id.startswith("age-002") else item.unknown_index
        return "ABC"[shown_order(3, key.permutation).index(choice)]

    settings = {"mode": "generate", "prompts": "1", "permutations": "0", "limit": 24, "statistics": False}
    p = Harness(tmp_path / "a", generator=ScriptedGenerator(reply)).run(settings).metrics.overall
    t = Harness(tmp_path / "b", generator=ScriptedGenerator(reply)).run({**settings, "aggregate": "per_template"})
    t = t.metrics.overall
    # pooled ambiguous answers: 2 biased (age-002b) + 4 unknown (age-003)
    assert p.diff_bias_amb.mean == pytest.approx(2 / 6)
    assert p.acc_amb.mean == pytest.approx(4 / 6)
    assert p.ooc_ratio.mean == pytest.approx(12 / 24)
    # per template: age-001 undefined (left out), age-002 diff-bias 1 / acc 0, age-003 diff-bias 0 / acc 1
    assert t.diff_bias_amb.mean == pytest.approx(0.5)
    assert t.acc_amb.mean == pytest.approx(0.5)
    assert t.ooc_ratio.mean == pytest.approx((1 + 0.5 + 0) / 3)
