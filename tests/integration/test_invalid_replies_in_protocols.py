"""A reply the backend could not get valid text for (``GenerationResult.invalid``) is counted by every
protocol that generates, and never graded as an answer: McBE and BBQ on scripted ports.

(LIBRA's definitions and the openai backend end to end: ``test_openai_invalid_replies.py``.)
"""

from __future__ import annotations

from culturebias.adapters.judging.judge import GeneratorJudge
from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
from culturebias.domain.mcbe.instances import BEI, McBEDataset
from culturebias.domain.requests import GenerationResult
from culturebias.testing.context import run_with_fakes

B1 = BEI("gender", "背景。", "[PLH]很能干。", ("甲", "乙"), "能力", "解释一", 6.0, "gender.xlsx", 2)
B2 = BEI("gender", "背景。", "[PLH]在做饭。", ("丙", "丁"), "家庭", "解释二", 3.0, "gender.xlsx", 3)


class InvalidWhen(ScriptedGenerator):
    """Like a backend whose server never sent text for a request holding ``marker``."""

    def __init__(self, rule, marker: str, name: str = "scripted-model"):
        super().__init__(rule, name=name)
        self.marker = marker

    def generate(self, requests, progress=None):
        out = super().generate(requests, progress)
        return [
            GenerationResult("", invalid=True) if self.marker in (r.prompt or r.messages[0].content) else result
            for r, result in zip(requests, out)
        ]


def mcbe_model(request, prompt: str) -> str:
    text = request.messages[0].content
    if "可选的类别有" in text:
        return "能力"
    if "句子1：" in text:
        return "A"
    if "严重程度打分" in text:
        return "3分"
    return "这句话有偏见。"


def test_mcbe_counts_invalid_replies_and_grades_none_of_them():
    generator = InvalidWhen(mcbe_model, "很能干")  # every request about B1
    judge = GeneratorJudge(ScriptedGenerator(lambda request, prompt: "5", name="judge"), max_retries=0)
    summary = run_with_fakes(
        "mcbe",
        options={"max_retries": 1, "prompt_set": "culturebias"},  # the scripted model knows this wording
        dataset=McBEDataset((B1, B2)),
        report=False,
        scorer=ScriptedScorer(lambda context, continuation: -1.0 * len(continuation)),
        generator=generator,
        judge=judge,
    ).summary
    counts, gender = summary.counts, summary.metrics.categories["gender"]
    # SC: B1 has no reply to grade (not a wrong answer); B2's "能力" is wrong
    assert counts.sc_invalid_replies == 1 and gender.invalid.sc_invalid_replies == 1
    assert gender.sc == 0.0 and summary.details.items["gender:2"].sc.reply == ""
    # SS: B1's two ordered pairs came back empty: unparseable, and counted as invalid
    assert counts.ss_invalid_replies == 2 and counts.ss_unparseable == 2
    # BA: B1's analysis never came, so it is not judged and not scored
    assert counts.ba_invalid_replies == 1 and counts.ba_judge_requests == 4
    assert summary.details.items["gender:2"].ba.score is None
    # BS: asked once and retried once, invalid both times: no rating
    assert counts.bs_invalid_replies == 2 and counts.bs_invalid == 1
    notes = " ".join(summary.notes)
    assert "SC: 1 BEI(s) got no valid reply" in notes and "BA: 1 analysis request(s) got no valid reply" in notes


def test_mcbe_without_invalid_replies_has_no_such_counts():
    summary = run_with_fakes(
        "mcbe",
        options={"tasks": "sc"},
        dataset=McBEDataset((B1, B2)),
        report=False,
        generator=ScriptedGenerator(mcbe_model),
    ).summary
    assert "sc_invalid_replies" not in summary.as_dict()["counts"]


def test_kobbq_counts_an_invalid_reply_out_of_choice_and_as_invalid(kobbq_data):
    options = {"mode": "generate", "limit": 2, "prompts": "1", "statistics": False}
    healthy = run_with_fakes("kobbq", options=options, data_path=kobbq_data, generator=ScriptedGenerator(lambda r, p: "A"))
    assert healthy.summary.counts.invalid_replies == 0 and healthy.summary.counts.out_of_choice == 0
    spoiled = run_with_fakes(
        "kobbq", options=options, data_path=kobbq_data, generator=InvalidWhen(lambda r, p: "A", marker="")  # every reply
    )
    counts = spoiled.summary.counts
    assert counts.answers == healthy.summary.counts.answers
    assert counts.invalid_replies == counts.answers and counts.out_of_choice == counts.answers
    assert any("got no valid reply from the backend" in note for note in spoiled.summary.notes)
