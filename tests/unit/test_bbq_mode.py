"""protocol.mode=auto (PROTOCOLS §2): generate for a model with a chat template, likelihood for a base model."""

from __future__ import annotations

import pytest

from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer, ScriptedTemplater
from culturebias.application.bbq.answering import plan_answers
from culturebias.application.bbq.service import answering_block, plan_notes
from culturebias.application.bbq.mode import PAPERS_GENERATED
from culturebias.domain.errors import CapabilityError
from culturebias.testing.context import fake_context


class NoScoring(ScriptedScorer):
    def check_loglikelihood(self) -> None:
        raise CapabilityError("scripted", "continuation log-likelihoods")


def ports(chat: bool, generator: bool = True, scorer: bool = True, scores: bool = True):
    return fake_context(
        templater=ScriptedTemplater() if chat else None,
        generator=ScriptedGenerator(lambda r, p: "A") if generator else None,
        scorer=(ScriptedScorer(lambda c, x: 0.0) if scores else NoScoring(lambda c, x: 0.0)) if scorer else None,
    )


@pytest.mark.parametrize(
    ("chat", "generator", "scores", "mode"),
    [
        (True, True, True, "generate"),  # an instruction-tuned model generates, as in the papers
        (False, True, True, "likelihood"),  # a base model is scored
        (True, False, True, "likelihood"),  # a chat model whose backend cannot generate is scored
        (False, True, False, "generate"),  # a base model whose backend cannot score generates
    ],
)
def test_auto_picks_by_chat_template_then_capabilities(chat, generator, scores, mode):
    plan = plan_answers(ports(chat, generator=generator, scores=scores), "auto")
    assert (plan.mode, plan.chat, plan.requested) == (mode, chat, "auto")
    assert plan.reason.startswith("protocol.mode=auto")
    block = answering_block(plan)
    assert block.mode == mode and block.papers_mode == "generate" and block.matches_papers is (mode == "generate")


def test_explicit_modes_are_kept_and_a_likelihood_run_says_the_papers_generated():
    plan = plan_answers(ports(chat=True), "likelihood")
    assert plan.mode == "likelihood" and plan.reason == "protocol.mode=likelihood"
    assert PAPERS_GENERATED in plan_notes(plan)
    generated = plan_answers(ports(chat=False), "generate")
    assert generated.mode == "generate" and PAPERS_GENERATED not in plan_notes(generated)


def test_auto_with_neither_capability_is_a_capability_error():
    with pytest.raises(CapabilityError):
        plan_answers(ports(chat=False, generator=False, scores=False), "auto")


def test_masked_mode_for_an_encoder_and_not_with_chain_of_thought():
    from culturebias.testing.scripted import ScriptedPseudoScorer
    from culturebias.domain.errors import ConfigError

    encoder = fake_context(pseudo_scorer=ScriptedPseudoScorer(lambda text, start, end: 0.0))
    plan = plan_answers(encoder, "auto")
    assert plan.mode == "masked" and "masked LM" in plan.reason
    assert plan_answers(encoder, "masked").mode == "masked"
    with pytest.raises(ConfigError, match="q_if_cot"):
        plan_answers(encoder, "masked", needs_generator=True)
    with pytest.raises(CapabilityError):
        plan_answers(ports(chat=False), "masked")  # a causal model has no pseudo-log-likelihood port


def test_best_option_is_the_best_mean_per_token():
    from culturebias.domain.bbq.masked_choice import best_option, option_text

    assert best_option([-6.0, -2.5, -4.0], [6, 2, 8]) == 2  # means -1, -1.25, -0.5
    assert best_option([-2.0, -2.0, -3.0], [2, 2, 2]) == 0  # a tie: the first
    text, start, end = option_text("材料", "谁？", "没有足够信息")
    assert text == "材料\n谁？\n没有足够信息" and text[start:end] == "没有足够信息"


def test_kobbq_in_masked_mode_uses_each_prompts_unknown_wording(tmp_path):
    from culturebias.adapters.kobbq.files import KoBBQFiles
    from culturebias.testing.scripted import ScriptedPseudoScorer
    from culturebias.testing.context import run_with_fakes

    prompts = KoBBQFiles(None).load().prompts
    unknowns = {p.unknown for p in prompts.values()}

    def rule(text: str, start: int, end: int) -> float:
        return 0.0 if text[start:end] in unknowns else -9.0

    result = run_with_fakes(
        "kobbq",
        options={"mode": "masked", "prompts": "1,2", "permutations": "0", "limit": 8, "statistics": False},
        out_dir=tmp_path,
        report=False,
        pseudo_scorer=ScriptedPseudoScorer(rule),
    )
    overall = result.summary.metrics.overall
    assert result.summary.metrics.mode == "masked"
    assert overall.acc_amb.mean == 1 and overall.diff_bias_amb.mean == 0 and overall.ooc_ratio.mean == 0
