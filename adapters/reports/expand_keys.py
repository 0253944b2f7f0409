"""``culturebias expand --help``: the ``--set protocol.<key>`` keys each expander reads.

An expander's module lists them in ``EXPAND_KEYS`` (key → what it does); a
plugin's expander without one is listed with "no keys documented".
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable

from culturebias.adapters.plugins.descriptors import BenchmarkDescriptor


def expand_keys_text(descriptors: Iterable[BenchmarkDescriptor]) -> str:
    lines = ["keys (--set protocol.KEY=VALUE; data.path names the template file or folder, the bundled copy when unset):"]
    for descriptor in descriptors:
        function = descriptor.expand_function()
        keys = getattr(inspect.getmodule(function), "EXPAND_KEYS", None) if function is not None else None  # a module constant, optional
        lines.append(f"  {descriptor.name}:")
        if not keys:
            lines.append("    (no keys documented)")
        for key, meaning in (keys or {}).items():
            lines.append(f"    protocol.{key}: {meaning}")
    return "\n".join(lines)
