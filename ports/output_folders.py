"""Output folders (``--out``): checked before anything runs, created when the first file is due."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class OutputFolders(Protocol):
    def check(self, path: Path) -> None:
        """A ``ConfigError`` unless ``path`` is, or can become, a folder this process writes. Writes nothing."""
        ...

    def make(self, path: Path) -> None:
        """Create ``path`` (and its parents); a ``ConfigError`` naming it when that fails."""
        ...
