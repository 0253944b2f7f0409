"""The generator contract suite (culturebias.testing.contracts.generator) over every registered adapter."""

from culturebias.testing.contracts.generator import *  # noqa: F401,F403  (the suite's fixtures and tests)
