"""Named presets: a paper's protocol as one typed overlay of settings (``--preset NAME``).

A preset is a set of ``key=value`` settings laid over the configuration before the
command line's ``--set`` (which still wins over it), and it names the benchmarks it
is for; ``culturebias list`` and ``culturebias run --help`` list them. Each benchmark
declares its own (its descriptor's ``presets``); this module gathers them from the registry.
"""

from __future__ import annotations

from culturebias.domain.errors import ConfigError, UnknownNameError
from culturebias.domain.presets import Preset


def presets() -> dict[str, Preset]:
    """Every registered benchmark's presets by name."""
    from culturebias.bootstrap.registry import registry

    found: dict[str, Preset] = {}
    for descriptor in registry().benchmarks.all():
        if not isinstance(descriptor, Exception):
            found.update((p.name, p) for p in descriptor.preset_list())
    return found


def preset(name: str) -> Preset:
    known = presets()
    found = known.get(name)
    if found is None:
        raise UnknownNameError("preset", name, list(known))
    return found


def preset_assignments(names: list[str], benchmarks: list[str]) -> list[str]:
    """The ``--set`` assignments of the presets named, each checked to be for one of ``benchmarks``."""
    out: list[str] = []
    for name in names:
        chosen = preset(name)
        if not set(chosen.benchmarks) & set(benchmarks):
            raise ConfigError(
                f"preset {name} is for {', '.join(chosen.benchmarks)}; this run is of {', '.join(benchmarks)}"
            )
        out += chosen.assignments()
    return out


def presets_text() -> str:
    lines = ["presets (--preset NAME; --set wins over a preset's values):"]
    for p in presets().values():
        lines.append(f"  {p.name:<18} for {', '.join(p.benchmarks)}: {p.description} [{p.source}]")
        lines.append(f"  {'':<18} sets {' '.join(p.assignments())}")
    return "\n".join(lines)
