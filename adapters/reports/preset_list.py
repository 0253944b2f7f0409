"""The presets as ``culturebias list`` and ``culturebias run --help`` list them."""

from __future__ import annotations

from collections.abc import Iterable

from culturebias.domain.presets import Preset


def presets_text(presets: Iterable[Preset]) -> str:
    lines = ["presets (--preset NAME; --set wins over a preset's values):"]
    for p in presets:
        lines.append(f"  {p.name:<18} for {', '.join(p.benchmarks)}: {p.description} [{p.source}]")
        lines.append(f"  {'':<18} sets {' '.join(p.assignments())}")
    return "\n".join(lines)
