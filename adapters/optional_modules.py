"""Optional libraries (extras): located without being imported, and a typed error with the pip command."""

from __future__ import annotations

import importlib.util
from typing import Callable

from culturebias.domain.errors import ConfigError


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
        install = f"pip install 'culturebias[{extra}]'" if extra else f"pip install {' '.join(missing)}"
        raise ConfigError(
            f"{what} needs {', '.join(missing)}, which this installation lacks: {install} "
            "(scripts/install.sh installs everything)"
        )
