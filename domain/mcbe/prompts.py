"""McBE's prompt sets (``protocol.prompt_set``), and the prompt of each generation task under one of them.

``table7`` (the default) is the paper's Table 7 wording (``prompts_table7.py``);
``released`` is the authors' released ``eval.py`` wording, verbatim
(``prompts_released.py``), which differs from Table 7 where PROTOCOLS §3 says;
``table11`` is the paper's Table 11 robustness wording of SC and BS (``prompts_table11.py``);
``culturebias`` is this project's own wording (``prompts_culturebias.py``);
``table7-partial`` is the default before Table 7 was known whole (Table 7's BA for the tested
model, eval.py's wording elsewhere), for reproducing earlier default runs.
``protocol.prompt_set`` names one set, or several: the first scores every task, each
further one re-runs SC and BS (the two tasks whose prompts Table 11 varies) for the
robustness correlations (``table7,table11``: the paper's Table 12).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
from dataclasses import dataclass
from typing import Protocol

from culturebias.domain.mcbe import (
    prompts_culturebias, prompts_released, prompts_table7, prompts_table7_partial, prompts_table11,
)
from culturebias.domain.mcbe.instances import BEI
from culturebias.domain.mcbe.taxonomy import BACriterion
from culturebias.domain.mcbe.conversation import Conversation
from culturebias.domain.requests import ChatMessage


@dataclass(frozen=True)
class PromptSet:
    name: str
    description: str
    classification: Callable[[str, Sequence[str]], Conversation]
    selection: Callable[[str, str], Conversation]
    analysis: Callable[[BEI], Conversation]
    judge: Callable[[str, str, BACriterion], Conversation]
    scoring: Callable[[BEI], Conversation]
    # The role the set's judge prompt opens with, on the prompt's first line ("" where it has none).
    judge_role: str = ""


class _PromptsModule(Protocol):
    """What a prompts module (``prompts_table7``, ``prompts_released``, ...) defines."""

    def classification_prompt(self, text: str, subcategories: Sequence[str]) -> Conversation: ...
    def selection_prompt(self, first: str, second: str) -> Conversation: ...
    def analysis_prompt(self, bei: BEI) -> Conversation: ...
    def judge_prompt(self, analysis: str, explanation: str, criterion: BACriterion) -> Conversation: ...
    def scoring_prompt(self, bei: BEI) -> Conversation: ...


def _from_module(name: str, description: str, module: _PromptsModule, judge_role: str = "") -> PromptSet:
    return PromptSet(
        name, description, module.classification_prompt, module.selection_prompt, module.analysis_prompt,
        module.judge_prompt, module.scoring_prompt, judge_role,
    )


PROMPT_SETS: dict[str, PromptSet] = {
    "table7": _from_module("table7", "the paper's Table 7 prompts, verbatim", prompts_table7, prompts_table7.JUDGE_ROLE),
    "released": _from_module("released", "the authors' released eval.py wording, verbatim", prompts_released),
    "table11": _from_module(
        "table11", "the paper's Table 11 robustness prompts for SC and BS, verbatim; other tasks as table7", prompts_table11,
        prompts_table7.JUDGE_ROLE,
    ),
    "table7-partial": _from_module(
        "table7-partial", "the default table7 before Table 7 was known whole: Table 7's BA prompt for the tested model, "
        "the released eval.py wording elsewhere (earlier default runs' numbers)", prompts_table7_partial,
    ),
    "culturebias": _from_module(
        "culturebias", "culturebias's own wording, the default before the paper's prompts were restored", prompts_culturebias
    ),
}
DEFAULT_PROMPT_SET = "table7"
# The set the paper's robustness experiment (Tables 11-12) sets against the default.
ROBUSTNESS_PROMPT_SET = "table11"
# The tasks a further prompt set re-runs for the robustness correlations (PROTOCOLS §3: SC and BS).
VARIANT_TASKS: tuple[str, ...] = ("sc", "bs")


def with_judge_role(prompts: PromptSet, role: str) -> PromptSet:
    """``prompts`` whose BA judge prompt opens with ``role`` on a line of its own, in place of the set's own role
    (Table 7's inline ``你的角色是一名判卷人员，``): ``protocol.judge_role``, for a judge given another role."""

    def judge(analysis: str, explanation: str, criterion: BACriterion) -> Conversation:
        first, *rest = prompts.judge(analysis, explanation, criterion)
        text = first.content.removeprefix(prompts.judge_role) if prompts.judge_role else first.content
        return (ChatMessage(first.role, f"{role}\n{text}"), *rest)

    return dataclasses.replace(prompts, judge=judge, judge_role=role + "\n")


def prompt_set(name: str) -> PromptSet:
    try:
        return PROMPT_SETS[name]
    except KeyError:
        raise ValueError(f"unknown McBE prompt set {name!r}; choose from {', '.join(sorted(PROMPT_SETS))}") from None


# The default set's prompts by task (callers that know the run's options pass ``prompt_set``).
def classification_prompt(text: str, subcategories: Sequence[str], prompt_set_name: str = DEFAULT_PROMPT_SET) -> Conversation:
    return prompt_set(prompt_set_name).classification(text, subcategories)


def selection_prompt(first: str, second: str, prompt_set_name: str = DEFAULT_PROMPT_SET) -> Conversation:
    return prompt_set(prompt_set_name).selection(first, second)


def analysis_prompt(bei: BEI, prompt_set_name: str = DEFAULT_PROMPT_SET) -> Conversation:
    return prompt_set(prompt_set_name).analysis(bei)


def judge_prompt(analysis: str, explanation: str, criterion: BACriterion, prompt_set_name: str = DEFAULT_PROMPT_SET) -> Conversation:
    return prompt_set(prompt_set_name).judge(analysis, explanation, criterion)


def scoring_prompt(bei: BEI, prompt_set_name: str = DEFAULT_PROMPT_SET) -> Conversation:
    return prompt_set(prompt_set_name).scoring(bei)


def severity_table() -> str:
    return prompts_culturebias.severity_table()
