"""Where a run's chat template was applied: what can differ between backends running the same command."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

# chat messages that are generated from: the template rendered here (hf, onnx) or by the server
# (openai: /v1/chat/completions applies the server's template, not visible here)
MessagesRendering = Literal["rendered here", "applied by the server (not visible here)"]
# text rendered from the template here: scored (TWBias types 1-10, BBQ likelihood with a template), or a
# generated prompt shown in the audit trail
TextRendering = Literal["rendered here", "rendered by the server's template endpoint", "not rendered"]


class ChatTemplateUse(BaseModel):
    """The templater's account of a run, recorded in ``summary.model.chat_template``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: MessagesRendering
    rendered_text: TextRendering
    # where the rendering template came from: "the tokenizer of model.path", "model.tokenizer=DIR",
    # "POST /apply-template at http://host:port", ...; "" where nothing was rendered here
    source: str = ""

    def describe(self) -> str:
        """One line for a report."""
        text = f"chat messages: {self.messages}; templated text: {self.rendered_text}"
        return text + (f" from {self.source}" if self.source else "")
