"""Named presets: a paper's protocol as one typed overlay of settings (``--preset NAME``).

A preset is a set of ``key=value`` settings laid over the configuration before the
command line's ``--set`` (which still wins over it), and it names the benchmarks it
is for; ``culturebias list`` and ``culturebias run --help`` list them. Each benchmark
declares its own (its descriptor's ``presets``); this module gathers them from the registry
(choosing them: ``application/presets.py``; listing them: ``adapters/reports/preset_list.py``).
"""

from __future__ import annotations

from culturebias.adapters.reports import preset_list
from culturebias.application import presets as chosen
from culturebias.domain.presets import Preset


def presets() -> dict[str, Preset]:
    """Every registered benchmark's presets by name."""
    from culturebias.bootstrap.registry import registry

    found: dict[str, Preset] = {}
    for descriptor in registry().benchmarks.all():
        if not isinstance(descriptor, Exception):
            found.update((p.name, p) for p in descriptor.preset_list())
    return found


def preset_assignments(names: list[str], benchmarks: list[str]) -> list[str]:
    """The ``--set`` assignments of the presets named, each checked to be for one of ``benchmarks``."""
    return chosen.preset_assignments(presets(), names, benchmarks)


def presets_text() -> str:
    return preset_list.presets_text(presets().values())
