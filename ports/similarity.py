"""Text embeddings for comparing two definitions by cosine similarity (LIBRA's knowledge boundary)."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable


@runtime_checkable
class TextEmbedder(Protocol):
    def describe(self) -> str:
        """Which embedding model this is."""
        ...

    def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        """One vector per text, in order (batched internally)."""
        ...
