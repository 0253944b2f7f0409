"""What LIBRA's descriptor names as its ``builder``: ``adapters.libra_build.cli``'s (kept at this path for the registry)."""

from culturebias.adapters.libra_build.cli import BUILDER

__all__ = ["BUILDER"]
