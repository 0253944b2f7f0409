"""``--preset NAME``: the ``--set`` assignments of the presets named, each checked to be for a benchmark of the run.

The presets known are given (``bootstrap/presets.py`` gathers them from the registered benchmarks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from culturebias.domain.errors import ConfigError, UnknownNameError
from culturebias.domain.presets import Preset


def preset_assignments(known: Mapping[str, Preset], names: Sequence[str], benchmarks: Sequence[str]) -> list[str]:
    """The assignments, preset after preset; an unknown name or a preset for none of ``benchmarks`` is an error."""
    out: list[str] = []
    for name in names:
        chosen = known.get(name)
        if chosen is None:
            raise UnknownNameError("preset", name, list(known))
        if not set(chosen.benchmarks) & set(benchmarks):
            raise ConfigError(
                f"preset {name} is for {', '.join(chosen.benchmarks)}; this run is of {', '.join(benchmarks)}"
            )
        out += chosen.assignments()
    return out
