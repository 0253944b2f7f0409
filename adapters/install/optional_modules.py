"""Optional libraries (extras): located without being imported, and a typed error with the pip command."""

from __future__ import annotations

import importlib
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


def import_modules(what: str, modules: tuple[str, ...], extra: str | None) -> None:
    """``require_modules``, then each module imported: one that is installed but fails to import (a broken or
    partial install, a dependency of the wrong version) is the same one-line ``ConfigError``, never a traceback."""
    require_modules(what, modules, extra)
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as error:
            install = install_hint(extra) if extra else f"pip install --force-reinstall {module}"
            reason = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
            raise ConfigError(
                f"{what} needs {module}, which is installed but cannot be imported ({reason[:200]}): reinstall it, "
                f"{install}"
            ) from None
