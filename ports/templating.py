"""Chat templating with the model's own template (PROTOCOLS §0.4)."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from culturebias.domain.requests import ChatMessage


@runtime_checkable
class ChatTemplater(Protocol):
    @property
    def has_chat_template(self) -> bool: ...

    def render(self, messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
        """The rendered text, BOS included where the template puts it (and where the scorer's model does not add its own)."""
        ...

    def check_render(self) -> None:
        """``CapabilityError`` unless ``render`` can produce text here (a served model's template may be applied
        by its server only); called in preflight, before anything is asked."""
        ...
