"""The conversation every McBE prompt set builds: one user turn (``prompts_*.py``)."""

from __future__ import annotations

from culturebias.domain.requests import ChatMessage

Conversation = tuple[ChatMessage, ...]


def user_turn(text: str) -> Conversation:
    """A conversation of one user message holding ``text``."""
    return (ChatMessage("user", text),)
