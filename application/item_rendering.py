"""The text a generation request put before the model, for a reviewer to read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from culturebias.domain.errors import CultureBiasError
from culturebias.domain.requests import GenerationRequest
from culturebias.ports.templating import ChatTemplater

if TYPE_CHECKING:  # the context module imports the services that import this one
    from culturebias.application.context import RunContext


def transcript(request: GenerationRequest) -> str:
    """The request's chat messages, one ``role: content`` block each (what a templater could not render)."""
    return "\n\n".join(f"{m.role}: {m.content}" for m in request.messages or ())


def rendered_prompt(templater: ChatTemplater | None, request: GenerationRequest) -> str:
    """The plain prompt, or the messages through the model's chat template (as the backend renders them)."""
    if request.prompt is not None:
        return request.prompt
    if templater is not None:
        try:
            return templater.render(list(request.messages or ()), add_generation_prompt=True)
        except (CultureBiasError, ValueError, TypeError):
            pass
    return transcript(request)


def templater_of(ctx: RunContext) -> ChatTemplater | None:
    """The run's templater, or None when the backend has none."""
    try:
        return ctx.templater()
    except CultureBiasError:
        return None
