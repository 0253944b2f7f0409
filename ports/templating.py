"""Chat templating with the model's own template (PROTOCOLS §0.4)."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from culturebias.domain.requests import ChatMessage


@runtime_checkable
class ChatTemplater(Protocol):
    @property
    def has_chat_template(self) -> bool: ...

    def render(self, messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
        """The rendered text, BOS included where the template puts it."""
        ...
