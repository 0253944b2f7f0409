"""The text a generation request put before the model, for a reviewer to read."""

from __future__ import annotations

from typing import Any

from culturebias.domain.errors import CultureBiasError
from culturebias.domain.requests import GenerationRequest


def transcript(request: GenerationRequest) -> str:
    """The request's chat messages, one ``role: content`` block each (what a templater could not render)."""
    return "\n\n".join(f"{m.role}: {m.content}" for m in request.messages or ())


def rendered_prompt(templater: Any, request: GenerationRequest) -> str:
    """The plain prompt, or the messages through the model's chat template (as the backend renders them)."""
    if request.prompt is not None:
        return request.prompt
    if templater is not None:
        try:
            return templater.render(list(request.messages or ()), add_generation_prompt=True)
        except (CultureBiasError, ValueError, TypeError):
            pass
    return transcript(request)


def templater_of(ctx: Any) -> Any:
    """The run's templater, or None when the backend has none."""
    try:
        return ctx.templater()
    except CultureBiasError:
        return None
