"""Text generation (PROTOCOLS §0.3)."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from culturebias.domain.identity import ModelIdentity
from culturebias.domain.requests import GenerationRequest, GenerationResult
from culturebias.ports.progress import ProgressTask


@runtime_checkable
class Generator(Protocol):
    @property
    def identity(self) -> ModelIdentity: ...

    def generate(
        self, requests: Sequence[GenerationRequest], progress: ProgressTask | None = None
    ) -> list[GenerationResult]: ...
