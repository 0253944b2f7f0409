"""A named preset: a paper's protocol as one typed overlay of settings (``--preset NAME``).

A benchmark declares its presets (``domain/<benchmark>/presets.py``) and its descriptor
carries them; ``bootstrap/presets.py`` gathers them from the registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict


class Preset(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str
    source: str  # where the protocol is written down
    benchmarks: tuple[str, ...]  # a run must include one of them
    settings: dict[str, Any]  # TOML boundary, nested like the file: {"run": {"repeats": 4}}

    def assignments(self) -> list[str]:
        """The overlay as ``--set`` assignments (``run.repeats=4``), in a stable order."""
        return [f"{key}={_text(value)}" for key, value in _flatten(self.settings)]


def _flatten(values: Mapping[str, object], prefix: str = "") -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for key, value in values.items():
        if isinstance(value, dict):
            out += _flatten(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def _text(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)
