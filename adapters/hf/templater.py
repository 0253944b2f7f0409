"""The tokenizer's own chat template (PROTOCOLS §0.4)."""

from __future__ import annotations

from typing import Any, Sequence

from culturebias.domain.chat_template_use import ChatTemplateUse
from culturebias.domain.errors import CapabilityError
from culturebias.domain.requests import ChatMessage, message_dicts


class HFTemplater:
    """``apply_chat_template(..., tokenize=False)``; ``model.chat_template="none"`` disables it."""

    def __init__(self, tokenizer: Any, enabled: bool = True, backend: str = "hf", source: str = "the tokenizer of model.path"):  # Any: a transformers tokenizer (None for a masked LM)
        self._tokenizer = tokenizer
        self._enabled = enabled
        self._backend = backend  # named in CapabilityError
        self._source = source  # where the template comes from, for the run's summary

    @property
    def has_chat_template(self) -> bool:
        return self._enabled and bool(getattr(self._tokenizer, "chat_template", None))

    @property
    def template_use(self) -> ChatTemplateUse | None:
        if not self.has_chat_template:
            return None
        return ChatTemplateUse(messages="rendered here", rendered_text="rendered here", source=self._source)

    def check_render(self) -> None:
        if not self.has_chat_template:
            reason = "disabled by model.chat_template=none" if not self._enabled else "the tokenizer has no chat template"
            raise CapabilityError(self._backend, "a chat template", reason)

    def render(self, messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
        self.check_render()
        return self._tokenizer.apply_chat_template(
            message_dicts(messages),
            tokenize=False,
            add_generation_prompt=add_generation_prompt,
        )
