"""Where a run's chat template was applied: what can differ between backends running the same command."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# chat messages that are generated from: the template rendered here (hf, onnx) or by the server
# (openai: /v1/chat/completions applies the server's template, not visible here)
MessagesRendering = Literal["rendered here", "applied by the server (not visible here)"]
# text rendered from the template here: scored (TWBias types 1-10, BBQ likelihood with a template), or a
# generated prompt shown in the audit trail
TextRendering = Literal["rendered here", "rendered by the server's template endpoint", "not rendered"]


class ChatTemplateUse(BaseModel):
    """The templater's account of a run, recorded in ``summary.model.chat_template``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: MessagesRendering = Field(
        description="how chat messages were rendered: here, by the server (not visible), or not at all",
    )
    rendered_text: TextRendering = Field(
        description="how text scored inside the template (TWBias types 1-10, likelihood answering) was rendered",
    )
    source: str = Field(
        "",
        description=(
            'where the rendering template came from: "the tokenizer of model.path", "model.tokenizer=DIR", "POST '
            '/apply-template at http://host:port", ...; empty where nothing was rendered here'
        ),
    )

    def describe(self) -> str:
        """One line for a report."""
        text = f"chat messages: {self.messages}; templated text: {self.rendered_text}"
        return text + (f" from {self.source}" if self.source else "")
