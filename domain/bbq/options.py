"""The protocol options KoBBQ and CBBQ share (``--set protocol.<name>=<value>``; values arrive as strings);
each one's own: domain/kobbq/options.py, domain/cbbq/options.py.

``mode``: ``generate`` (the model writes an answer, mapped to an option or
counted out-of-choice), ``likelihood`` (the option letters are scored as
continuations of the prompt and the likeliest is the answer), or ``auto``
(the default, PROTOCOLS §2): generate for a model with a chat template
(instruction-tuned; both papers generated) and likelihood for a base model;
where the backend lacks the capability the other mode is used, and a masked
LM (``model.kind=masked``) answers in ``masked`` mode: each option's text is
scored by pseudo-log-likelihood after the context and question, per token,
and the likeliest option is the answer (``application/bbq/mode.py``). The summary's ``metrics.answering`` and the
report say which mode ran and why; a likelihood run says the papers generated.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from culturebias.domain.bbq.answer_order import PermutationScheme
from culturebias.domain.option_types import CommaList
from culturebias.domain.stratified import SampleOptions

# masked: an encoder (masked LM, model.kind=masked) scores each option by pseudo-log-likelihood (CBBQ §5.8)
Mode = Literal["auto", "generate", "likelihood", "masked"]
AnswerMode = Literal["generate", "likelihood", "masked"]  # what ``auto`` resolves to before a run


def as_strings(value: object) -> object:
    """A comma option's values as stripped strings (a lone number becomes a one-item list)."""
    if isinstance(value, (int, float)):
        value = [value]
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value]
    return value


def item_limit(of_what: str) -> Any:  # Any: pydantic's FieldInfo, typed as the field's value for mypy
    """``limit``: the first N items ``of_what`` (None: all), N ≥ 1."""
    return Field(None, ge=1, description=f"the first N items of {of_what}")


class BBQOptions(SampleOptions):
    model_config = ConfigDict(extra="forbid")

    # auto: generate for a model with a chat template (as the papers did), score the option letters for a base
    # model, pseudo-log-likelihood for a masked LM; likelihood, generate or masked force one.
    mode: Mode = "auto"
    permutation_scheme: PermutationScheme = "cyclic"  # option orders: cyclic shifts (ours) or the authors' circulant rows
    categories: CommaList | None = None  # None = every category in the data
    # Quick runs: the first N items (after the category filter); each subclass says of what.
    limit: int | None = Field(None, ge=1)  # each subclass states what with item_limit
    max_new_tokens: int = Field(32, ge=1)  # generate mode: the answer turn
    keep_predictions: bool = True  # every answer, one compact line each, in summary.json details

    @field_validator("permutations", mode="after", check_fields=False)
    @classmethod
    def _valid_permutations(cls, value: list[int]) -> list[int]:
        if not value or any(p not in (0, 1, 2) for p in value):
            raise ValueError(f"permutations must be a non-empty subset of 0,1,2, got {value}")
        return sorted(set(value))

    # The list fields given as comma-separated text or a list: categories here, CBBQ's condition, KoBBQ's prompts.
    @field_validator("categories", "condition", "prompts", mode="before", check_fields=False)
    @classmethod
    def _list_strings(cls, value: object) -> object:
        return as_strings(value)
