"""Optional libraries (extras): located without being imported, and a typed error with the pip command."""

from __future__ import annotations

import importlib.util
from typing import Callable

from culturebias.domain.errors import ConfigError


# Extras that scripts/install.sh does not install (it installs "all", and "test" with --test).
NOT_IN_ALL = frozenset({"gpu", "gemma", "embeddings", "bench"})


def install_hint(extra: str) -> str:
    """The command that adds an extra. culturebias is not on PyPI: it is installed from its clone, editable."""
    everything = "" if extra in NOT_IN_ALL else " (bash scripts/install.sh installs every extra)"
    return f"pip install -e '.[{extra}]' in the culturebias clone{everything}"


def findable(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require_modules(
    what: str, modules: tuple[str, ...], extra: str | None, *, locate: Callable[[str], bool] = findable
) -> None:
    """A ConfigError naming the pip command when any of ``modules`` is missing."""
    missing = [module for module in modules if not locate(module)]
    if missing:
        install = install_hint(extra) if extra else f"pip install {' '.join(missing)} (bash scripts/install.sh installs everything)"
        raise ConfigError(f"{what} needs {', '.join(missing)}, which this installation lacks: {install}")
